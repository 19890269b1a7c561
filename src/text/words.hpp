#pragma once
// How a line is cut into words, shared by training and encoding: every space starts a new word,
// and the line gets one leading space (the dummy prefix). A word is therefore a space followed
// by non-space characters, e.g. "a  b" -> " a", " ", " b". An empty line has no words.
#include <string>
#include <string_view>

namespace heed {

template <typename Fn>
void for_each_word(std::string_view line, Fn&& fn) {
  if (line.empty()) return;
  size_t end = line.find(' ');
  if (end == std::string_view::npos) end = line.size();
  thread_local std::string first;
  first.assign(1, ' ');
  first.append(line.substr(0, end));
  fn(std::string_view(first));
  while (end < line.size()) {
    size_t next = line.find(' ', end + 1);
    if (next == std::string_view::npos) next = line.size();
    fn(line.substr(end, next - end));
    end = next;
  }
}

}  // namespace heed

#pragma once
// Progress of long work: on a terminal one line redrawn in place; otherwise nothing here (the
// caller logs periodic lines instead).
#include <cstdio>
#include <string>

namespace heed {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();  // ends the line
  bool active() const { return active_; }
  void update(const std::string& text);  // redraws (at most ~10 times a second)
  void clear();                          // before a log line, so they do not mix

 private:
  bool active_;
  bool shown_ = false;
  double last_ = -1;
};

std::string format_duration(double seconds);  // "1h02m03s", "4m05s", "12s"

}  // namespace heed

#include "serve/page.hpp"

namespace heed::serve {

std::string_view page_html() {
  // Text goes into the page with textContent only, never as HTML.
  static constexpr std::string_view kPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>heed translate</title>
<style>
  body { font: 16px/1.45 system-ui, sans-serif; max-width: 64rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.25rem; font-weight: 600; }
  .panes { display: flex; gap: 1rem; }
  textarea, #out { flex: 1; min-height: 14rem; padding: .6rem; font: inherit; border: 1px solid #bbb; border-radius: 4px; box-sizing: border-box; }
  #out { background: #f5f5f5; white-space: pre-wrap; }
  #status { color: #666; font-size: .9rem; margin-top: .5rem; min-height: 1.2rem; }
</style>
</head>
<body>
<h1>heed translate <span id="model"></span></h1>
<div class="panes">
  <textarea id="src" placeholder="Type here, one sentence per line" autofocus></textarea>
  <div id="out" aria-live="polite"></div>
</div>
<div id="status"></div>
<script>
const src = document.getElementById("src"), out = document.getElementById("out"),
      status = document.getElementById("status"), model = document.getElementById("model");
let timer = null, latest = 0;
async function translate() {
  const mine = ++latest;
  if (src.value.trim() === "") { out.textContent = ""; status.textContent = ""; return; }
  const lines = src.value.split("\n");
  try {
    const r = await fetch("/v1/translate", { method: "POST", headers: { "Content-Type": "application/json" },
                                             body: JSON.stringify({ text: lines }) });
    const answer = await r.json();
    if (mine !== latest) return;  // a later keystroke's answer is on its way
    if (!r.ok) { status.textContent = "error: " + answer.error; return; }
    out.textContent = answer.translations.join("\n");
    model.textContent = "(" + answer.model + ")";
    status.textContent = lines.length + (lines.length === 1 ? " line" : " lines") + " in " + answer.time_ms + " ms";
  } catch (e) {
    if (mine === latest) status.textContent = "error: " + e;
  }
}
src.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(translate, 150); });
const given = new URLSearchParams(location.search).get("text");
if (given !== null) { src.value = given; translate(); }
</script>
</body>
</html>
)html";
  return kPage;
}

}  // namespace heed::serve

#include "train/learning_curves.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/line_chart.hpp"

namespace heed {
namespace {

// A number, or null: JSON has no NaN, and a non-finite loss is written as null (a point not drawn).
bool number_field(const nlohmann::json& record, const char* key, double& out) {
  auto it = record.find(key);
  if (it == record.end() || !(it->is_number() || it->is_null())) return false;
  out = it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->get<double>();
  return true;
}

}  // namespace

RunCurves read_run_curves(const std::string& metrics_path, const std::string& name) {
  RunCurves run;
  run.name = name;
  const std::string text = read_file(metrics_path);
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    const bool complete = end != std::string::npos;
    const std::string line = text.substr(start, complete ? end - start : std::string::npos);
    start = complete ? end + 1 : text.size();
    ++line_no;
    if (line.empty()) continue;
    const std::string where = metrics_path + ":" + std::to_string(line_no);
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      if (!complete) break;  // a run still writing its last line, or killed while it did
      throw Error(where + ": not a JSON record");
    }
    if (!record.is_object()) throw Error(where + ": not a JSON object");
    const auto type_field = record.find("type");
    if (type_field == record.end() || !type_field->is_string()) continue;  // not a record of training
    const std::string type = type_field->get<std::string>();
    if (type != "train" && type != "valid") continue;
    CurvePoint point;
    if (!number_field(record, "step", point.step) || !number_field(record, "elapsed", point.seconds) ||
        !number_field(record, "loss", point.value))
      throw Error(where + ": a " + type + " record needs numbers \"step\", \"elapsed\" and \"loss\"");
    (type == "train" ? run.train_loss : run.dev_loss).push_back(point);
    if (type == "valid" && number_field(record, "bleu", point.value)) run.dev_bleu.push_back(point);
  }
  if (run.train_loss.empty() && run.dev_loss.empty())
    throw Error(metrics_path + ": no training or validation records (not a translation run's metrics.jsonl?)");
  return run;
}

std::string learning_curves_svg(const std::vector<RunCurves>& runs) {
  double longest = 0;
  for (const RunCurves& run : runs)
    for (const auto* points : {&run.train_loss, &run.dev_loss})
      for (const CurvePoint& p : *points) longest = std::max(longest, p.seconds);
  const bool in_hours = longest > 3 * 3600;
  const double time_unit = in_hours ? 3600 : 60;
  const std::string time_label = in_hours ? "wall time (hours)" : "wall time (minutes)";

  ChartPanel bleu_steps{"dev BLEU", "updates", {}, true}, bleu_time{"dev BLEU", time_label, {}, true};
  ChartPanel loss_steps{"loss (solid: training, dashed: dev)", "updates", {}, false};
  ChartPanel loss_time{"loss (solid: training, dashed: dev)", time_label, {}, false};
  std::vector<LegendEntry> legend;
  for (size_t r = 0; r < runs.size(); ++r) {
    const int colour = static_cast<int>(r);
    auto by_step = [](const std::vector<CurvePoint>& points) {
      std::vector<std::pair<double, double>> out;
      for (const CurvePoint& p : points) out.emplace_back(p.step, p.value);
      return out;
    };
    auto by_time = [&](const std::vector<CurvePoint>& points) {
      std::vector<std::pair<double, double>> out;
      for (const CurvePoint& p : points) out.emplace_back(p.seconds / time_unit, p.value);
      return out;
    };
    const RunCurves& run = runs[r];
    bleu_steps.lines.push_back({by_step(run.dev_bleu), colour, false});
    bleu_time.lines.push_back({by_time(run.dev_bleu), colour, false});
    loss_steps.lines.push_back({by_step(run.train_loss), colour, false});
    loss_steps.lines.push_back({by_step(run.dev_loss), colour, true});
    loss_time.lines.push_back({by_time(run.train_loss), colour, false});
    loss_time.lines.push_back({by_time(run.dev_loss), colour, true});
    std::string label = run.name;
    if (!run.dev_bleu.empty()) {
      const auto best = std::max_element(run.dev_bleu.begin(), run.dev_bleu.end(),
                                         [](const CurvePoint& a, const CurvePoint& b) { return a.value < b.value; });
      char buf[96];
      std::snprintf(buf, sizeof buf, ": best dev BLEU %.2f at update %.0f", best->value, best->step);
      label += buf;
    }
    legend.push_back({label, colour});
  }
  return line_charts_svg({bleu_steps, bleu_time, loss_steps, loss_time}, 2, legend);
}

}  // namespace heed

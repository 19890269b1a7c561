#pragma once
// Learning curves of translation runs, read from their metrics.jsonl: dev BLEU and loss (training
// windows and validations) against updates and against wall time, drawn as one SVG for one or
// more runs (`heed plot`, and curves.svg that training rewrites at every validation).
#include <string>
#include <vector>

namespace heed {

struct CurvePoint {
  double step = 0, seconds = 0, value = 0;
};

struct RunCurves {
  std::string name;                             // the legend's label (the run directory's name)
  std::vector<CurvePoint> train_loss, dev_loss, dev_bleu;
};

// Reads a metrics.jsonl; a damaged line is an Error naming path:line. Records other than "train"
// and "valid" are skipped; a run without any is an Error naming the file.
RunCurves read_run_curves(const std::string& metrics_path, const std::string& name);

std::string learning_curves_svg(const std::vector<RunCurves>& runs);

}  // namespace heed

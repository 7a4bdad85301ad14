// `rldk evals validate`: what the readers made of the sources, before any statistics: arms, tasks, seeds and items
// per arm and task, and the design a comparison of the first two arms would use per task.
#include <map>
#include <set>

#include "report/markdown_text.h"
#include "rldk/evals.h"

namespace rldk::evals {

std::string eval_data_markdown(const EvalData& data) {
  struct Cell {
    std::set<std::string> seeds, items;
    size_t scores = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, Cell> cells;  // (arm, task)
  for (const auto& c : data.cells) {
    Cell& cell = cells[{c.arm, c.task}];
    cell.seeds.insert(c.seed);
    if (!c.item.empty()) cell.items.insert(c.item);
    ++cell.scores;
  }
  std::string md = "# rldk evals validate\n\n";
  md += std::to_string(data.cells.size()) + " scores, " + std::to_string(data.arms.size()) + " arms, " +
        std::to_string(data.tasks.size()) + " tasks from " + std::to_string(data.sources.size()) + " sources.\n\n";
  md += "| arm | task | seeds | items | scores |\n|---|---|---|---|---|\n";
  for (const auto& [key, cell] : cells) {
    md += "| " + md_text(data.arms[key.first]) + " | " + md_text(data.tasks[key.second]) + " | " +
          std::to_string(cell.seeds.size()) + " | " + std::to_string(cell.items.size()) + " | " +
          std::to_string(cell.scores) + " |\n";
  }
  if (data.arms.size() >= 2) {
    md += "\nDesign of `rldk evals compare` for " + md_code(data.arms[0]) + " vs " + md_code(data.arms[1]) +
          " (the first two arms):\n\n";
    for (uint32_t t = 0; t < data.tasks.size(); ++t) {
      auto a = cells.find({0, t}), b = cells.find({1, t});
      std::string design;
      if (a == cells.end() || b == cells.end()) {
        design = "not compared (one arm has no scores)";
      } else if (a->second.items.empty() && b->second.items.empty()) {
        design = "seeds (" + std::to_string(a->second.seeds.size()) + " / " + std::to_string(b->second.seeds.size()) +
                 ")";
      } else {
        size_t shared = 0;
        for (const auto& item : a->second.items) shared += b->second.items.count(item);
        bool one_seed = a->second.seeds.size() == 1 && b->second.seeds.size() == 1;
        design = shared >= 2 ? (one_seed ? "paired" : "two-level or unpaired-items (if some seed lacks an item)")
                             : "unpaired-items";
        design += " (" + std::to_string(shared) + " shared items)";
      }
      md += "- " + md_text(data.tasks[t]) + ": " + design + "\n";
    }
  } else {
    md += "\nOne arm: `rldk evals aggregate` applies; `compare` needs two.\n";
  }
  return md;
}

}  // namespace rldk::evals

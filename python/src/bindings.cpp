// Binds the engine to Python as rldk._core. Only the public API (include/rldk) is used. Errors become the
// exception classes of rldk.errors, which also derive from the matching builtins (FileNotFoundError, ValueError);
// any other C++ exception becomes rldk.errors.RldkError, so nothing reaches a caller as a bare RuntimeError.
//
// Strings: the engine keeps bytes as they were logged, and a log may hold anything. Every std::string crossing into
// Python goes through one caster (below, instead of nanobind/stl/string.h) that decodes UTF-8 with
// errors="replace", so one bad byte in a metric name can never make a property raise UnicodeDecodeError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "rldk/actions.h"
#include "rldk/evals.h"
#include "rldk/event_writer.h"
#include "rldk/monitor.h"
#include "rldk/monitor_report.h"
#include "rldk/rules.h"
#include "rldk/metric_dictionary.h"
#include "rldk/reader.h"
#include "rldk/reward_drift.h"
#include "rldk/reward_health.h"
#include "rldk/samples.h"
#include "rldk/scan.h"
#include "rldk/version.h"
#include "binding_support.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// The one decoder for text leaving the engine: UTF-8, invalid bytes as U+FFFD (Python's errors="replace"), which
// never fails. `replaced` tells whether the bytes were not valid UTF-8. Needs the GIL.
nb::str py_text(std::string_view bytes, bool* replaced = nullptr) {
  PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), nullptr);
  if (replaced) *replaced = text == nullptr;
  if (text == nullptr) {
    PyErr_Clear();
    text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  }
  if (text == nullptr) throw nb::python_error();  // only on MemoryError: "replace" accepts every byte sequence
  return nb::steal<nb::str>(text);
}

// UTF-8 of a Python str. A str holding lone surrogates has no UTF-8 form; the usual source is os.fsdecode()
// (os.listdir, sys.argv) of a file name that is not UTF-8, whose surrogateescape round-trips to the original bytes,
// so the file opens. Any other surrogate is kept visible as \udXXX rather than refusing the argument with a TypeError.
bool utf8_of(PyObject* src, std::string& out) {
  Py_ssize_t size = 0;
  if (const char* data = PyUnicode_AsUTF8AndSize(src, &size)) {
    out.assign(data, static_cast<size_t>(size));
    return true;
  }
  PyErr_Clear();
  for (const char* errors : {"surrogateescape", "backslashreplace"}) {
    PyObject* encoded = PyUnicode_AsEncodedString(src, "utf-8", errors);
    if (encoded != nullptr) {
      out.assign(PyBytes_AS_STRING(encoded), static_cast<size_t>(PyBytes_GET_SIZE(encoded)));
      Py_DECREF(encoded);
      return true;
    }
    PyErr_Clear();
  }
  return false;
}

}  // namespace

namespace nanobind::detail {

// Replaces nanobind's std::string caster (strict decoding) for every binding in this module: struct members
// (def_ro), returned vectors and maps, dict items and exception texts alike.
template <>
struct type_caster<std::string> {
  NB_TYPE_CASTER(std::string, const_name("str"))

  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    return PyUnicode_Check(src.ptr()) && utf8_of(src.ptr(), value);
  }

  static handle from_cpp(const std::string& value, rv_policy, cleanup_list*) noexcept {
    try {
      return py_text(value).release();
    } catch (python_error& e) {
      e.restore();  // MemoryError: nanobind sees nullptr with the error set
      return handle();
    }
  }
};

}  // namespace nanobind::detail

namespace {

const char* code_name(rldk::ErrorCode code) {
  switch (code) {
    case rldk::ErrorCode::not_found: return "not_found";
    case rldk::ErrorCode::unreadable: return "unreadable";
    case rldk::ErrorCode::unrecognized: return "unrecognized";
    case rldk::ErrorCode::invalid_argument: return "invalid_argument";
    case rldk::ErrorCode::io: return "io";
  }
  return "io";
}

[[noreturn]] void raise(const rldk::Error& error) {
  nb::object exc = nb::module_::import_("rldk.errors").attr("error_from_code")(
      code_name(error.code), rldk::to_string(error), error.context);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

[[noreturn]] void invalid_argument(const std::string& message) {
  raise(rldk::Error{rldk::ErrorCode::invalid_argument, message, ""});
}

}  // namespace

void rldk_py::raise(const rldk::Error& error) { ::raise(error); }

namespace {

// rldk.errors.<name>(message), raised; for the classes that have no error code (MetricNotFoundError).
[[noreturn]] void raise_class(const char* name, const std::string& message) {
  nb::object exc = nb::module_::import_("rldk.errors").attr(name)(message);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

// repr(value) for an error message, cut short: the value is whatever the caller passed, possibly megabytes of text.
std::string short_repr(nb::handle value) {
  std::string text = "<unrepresentable>";
  if (PyObject* r = PyObject_Repr(value.ptr())) {
    utf8_of(r, text);
    Py_DECREF(r);
  } else {
    PyErr_Clear();  // a __repr__ that raises must not replace the error being reported
  }
  constexpr size_t MAX = 80;
  if (text.size() > MAX) text = text.substr(0, MAX) + "...";
  return text;
}

// A step from Python, as trainers hold it: int, a NumPy or torch integer (anything with __index__), or a float with
// a whole value (int(step) accepted those before). Anything else — 2**63, NaN, 1.5, True, "3", None — is refused
// with InvalidArgumentError naming the argument and the value, instead of nanobind's "incompatible function
// arguments" TypeError or a silent int("3").
int64_t to_step(nb::handle value, const char* arg) {
  PyObject* o = value.ptr();
  auto refuse = [&](const char* why) {
    invalid_argument(std::string(arg) + " must be a whole number in the int64 range, got " + short_repr(value) +
                     " (" + Py_TYPE(o)->tp_name + ")" + why);
  };
  // bool is an int subclass (True would be step 1) and numpy.bool has no __index__: both refused by name.
  if (PyBool_Check(o) || std::string_view(Py_TYPE(o)->tp_name) == "numpy.bool") refuse(": a bool is not a step");
  if (PyFloat_Check(o)) {
    double d = PyFloat_AS_DOUBLE(o);
    // 2**63 is exactly representable; the largest double below it is the largest float that fits int64.
    if (std::isfinite(d) && d == std::floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
      return static_cast<int64_t>(d);
    }
    refuse(std::isfinite(d) && d == std::floor(d) ? ": outside the int64 range" : "");
  }
  if (PyIndex_Check(o)) {
    PyObject* index = PyNumber_Index(o);
    if (index == nullptr) {
      PyErr_Clear();
      refuse("");
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (overflow != 0) refuse(": outside the int64 range");
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      refuse("");
    }
    return v;
  }
  refuse("");
  return 0;  // not reached: refuse raises
}

// Metric names and run ids as read are bytes; one that is not valid UTF-8 would be unreachable from Python under its
// decoded name (run[name] looks up bytes). Each is renamed to its U+FFFD form (a " (2)" suffix when two collapse
// onto one name), so metrics, run[name], to_pandas and repr agree, and each rename is a diagnostic of kind
// "invalid_utf8" on the run: counted in diagnostic_counts, the first examples in diagnostics.
void replace_invalid_names(rldk::Run& run) {
  auto note = [&](const char* what, const std::string& bytes, const std::string& shown) {
    PyObject* escaped = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "backslashreplace");
    std::string original = shown;
    if (escaped != nullptr) {
      utf8_of(escaped, original);
      Py_DECREF(escaped);
    } else {
      PyErr_Clear();
    }
    run.diagnostics.add(rldk::Diagnostic{"invalid_utf8", run.source.path, 0,
                                         std::string(what) + " '" + original + "' is not valid UTF-8; shown as '" +
                                             shown + "' (invalid bytes replaced by U+FFFD)"});
  };
  auto decoded = [](const std::string& bytes, bool& replaced) {
    std::string out;
    utf8_of(py_text(bytes, &replaced).ptr(), out);
    return out;
  };

  bool replaced = false;
  std::string id = decoded(run.run_id, replaced);
  if (replaced) {
    note("run id", run.run_id, id);
    run.run_id = id;
  }

  std::map<std::string, std::string> renamed;  // invalid bytes -> the name the run now uses
  std::vector<std::string> invalid;
  for (const auto& [name, series] : run.series) {
    decoded(name, replaced);
    if (replaced) invalid.push_back(name);
  }
  for (const auto& old_name : invalid) {
    const std::string base = decoded(old_name, replaced);
    std::string name = base;
    for (int n = 2; run.series.count(name) != 0; ++n) name = base + " (" + std::to_string(n) + ")";
    auto node = run.series.extract(old_name);
    node.key() = name;
    node.mapped().name = name;
    run.series.insert(std::move(node));
    renamed[old_name] = name;
    note("metric name", old_name, name);
  }

  // raw -> canonical: canonical names follow the series renames; raw names not already reported are reported too.
  // Left as it is when every name in it is valid (the common case: no copy of a map of a million names).
  bool clean = renamed.empty();
  for (auto it = run.raw_to_canonical.begin(); clean && it != run.raw_to_canonical.end(); ++it) {
    decoded(it->first, replaced);
    if (!replaced) decoded(it->second, replaced);
    clean = !replaced;
  }
  if (clean) return;
  std::map<std::string, std::string> raw_to_canonical;
  for (const auto& [raw, canonical] : run.raw_to_canonical) {
    std::string to = canonical;
    if (auto it = renamed.find(canonical); it != renamed.end()) {
      to = it->second;
    } else {
      to = decoded(canonical, replaced);
    }
    std::string from = raw;
    if (auto it = renamed.find(raw); it != renamed.end()) {
      from = it->second;
    } else {
      from = decoded(raw, replaced);
      if (replaced) {
        std::string base = from;
        for (int n = 2; raw_to_canonical.count(from) != 0; ++n) from = base + " (" + std::to_string(n) + ")";
        note("metric name", raw, from);
      }
    }
    raw_to_canonical.emplace(std::move(from), std::move(to));
  }
  run.raw_to_canonical = std::move(raw_to_canonical);
}

template <class T>
T unwrap(rldk::Result<T> result) {
  if (!result.ok()) raise(result.error());
  return std::move(result).value();
}

rldk::Format parse_format(const std::string& name) {
  rldk::Format format = rldk::Format::unknown;
  if (!rldk::parse_format_name(name, format)) {
    raise(rldk::Error{rldk::ErrorCode::invalid_argument,
                      "unknown format '" + name + "' (expected auto, jsonl, json, csv, tsv or console)", ""});
  }
  return format;
}

// A read-only NumPy view of a column; `owner` (the Python Series) keeps the memory alive.
template <class T>
nb::ndarray<nb::numpy, const T, nb::ndim<1>> column(const std::vector<T>& data, nb::handle owner) {
  return nb::ndarray<nb::numpy, const T, nb::ndim<1>>(data.data(), {data.size()}, owner);
}

struct EventWriterHandle {
  std::unique_ptr<rldk::EventWriter> writer_ptr;
  std::string path = writer_ptr ? writer_ptr->path() : std::string();

  rldk::EventWriter& writer() {
    if (!writer_ptr) {
      raise(rldk::Error{rldk::ErrorCode::invalid_argument, "EventWriter is closed", path});
    }
    return *writer_ptr;
  }
};

// In-process guard rules for trainer integrations: the same engine and presets as `rldk monitor`.
struct Monitor {
  std::unique_ptr<rldk::RuleEngine> engine;
  std::unique_ptr<rldk::ActionDispatcher> dispatcher;  // only when an alerts file is asked for
  std::vector<nb::dict> history;
  rldk::AlertTally tally;  // what the session's verdict counts (rldk::monitor_verdict)
  uint64_t finished_at = 0;  // observations when finish() last ran: nothing new since means nothing to finish

  nb::dict alert_dict(const rldk::Alert& a) {
    nb::dict d;
    d["rule_id"] = a.rule_id;
    d["run_id"] = a.run_id;
    d["metric"] = a.metric;
    d["step"] = a.step;
    d["value"] = a.value;
    d["message"] = a.message;
    d["stop"] = a.stop;
    d["window"] = a.window;
    std::vector<std::string> kinds;
    if (a.rule) {
      for (const auto& act : a.rule->actions) kinds.push_back(act.kind);
    }
    d["actions"] = kinds;
    return d;
  }

  nb::list deliver(std::vector<rldk::Alert>& alerts) {
    nb::list out;
    for (const auto& a : alerts) {
      tally.add(a);
      if (dispatcher) dispatcher->dispatch(a);
      nb::dict d = alert_dict(a);
      history.push_back(d);
      out.append(d);
    }
    alerts.clear();
    return out;
  }
};

nb::dict diagnostic_dict(const rldk::Diagnostic& d) {
  nb::dict out;
  out["kind"] = d.kind;
  out["file"] = d.file;
  out["line"] = d.line;
  out["message"] = d.message;
  return out;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Native engine of rldk (read runs, canonical metric names, event writing).";
  m.attr("__version__") = rldk::VERSION;

  // Errors the engine reports are rldk::Error (raise() above). A C++ exception escaping anyway (std::bad_alloc
  // aside, which stays MemoryError) becomes rldk.errors.RldkError rather than nanobind's RuntimeError/ValueError,
  // with its text decoded like every other string. Registered last, so it is tried before nanobind's default.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const std::bad_alloc&) {
      throw;  // nanobind's default translator: MemoryError
    } catch (const nb::builtin_exception&) {
      throw;  // raised on purpose as a builtin (e.g. StopIteration); left to nanobind
    } catch (const std::exception& e) {
      nb::object exc = nb::module_::import_("rldk.errors").attr("RldkError")(py_text(e.what()));
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });

  rldk_py::bind_provenance(m);
  rldk_py::bind_contamination(m);

  m.def("as_step", [](nb::handle value, const std::string& arg) { return to_step(value, arg.c_str()); },
        "value"_a.none(), "arg"_a = "step", "The step as an int64, or InvalidArgumentError naming arg and the value.");

  nb::class_<rldk::Series>(m, "Series", "One metric over time, columnar. Arrays are read-only views.")
      .def_ro("name", &rldk::Series::name)
      .def_prop_ro("steps", [](nb::handle self) {
        return column(nb::cast<const rldk::Series&>(self).steps, self);
      }, nb::rv_policy::reference_internal)
      .def_prop_ro("values", [](nb::handle self) {
        return column(nb::cast<const rldk::Series&>(self).values, self);
      }, nb::rv_policy::reference_internal)
      .def_prop_ro("wall_times", [](nb::handle self) {
        return column(nb::cast<const rldk::Series&>(self).wall_times, self);
      }, nb::rv_policy::reference_internal)
      .def_prop_ro("segments", [](nb::handle self) {
        return column(nb::cast<const rldk::Series&>(self).segments, self);
      }, nb::rv_policy::reference_internal)
      .def_prop_ro("non_finite_count", &rldk::Series::non_finite_count)
      .def_prop_ro("first_non_finite_step", [](const rldk::Series& s) -> std::optional<int64_t> {
        size_t i = s.first_non_finite();
        if (i == s.size()) return std::nullopt;
        return s.steps[i];
      })
      .def("__len__", &rldk::Series::size)
      .def("__repr__", [](const rldk::Series& s) {
        return "<rldk.Series " + s.name + ": " + std::to_string(s.size()) + " points>";
      });

  nb::class_<rldk::Segment>(m, "Segment", "A stretch of a run in which steps only move forward.")
      .def_ro("index", &rldk::Segment::index)
      .def_ro("first_step", &rldk::Segment::first_step)
      .def_ro("last_step", &rldk::Segment::last_step)
      .def_ro("start_line", &rldk::Segment::start_line)
      .def("__repr__", [](const rldk::Segment& s) {
        return "<rldk.Segment #" + std::to_string(s.index) + " steps " + std::to_string(s.first_step) + ".." +
               std::to_string(s.last_step) + ">";
      });

  nb::class_<rldk::Run>(m, "Run")
      .def_ro("run_id", &rldk::Run::run_id)
      .def_prop_ro("source", [](const rldk::Run& r) { return r.source.path; })
      .def_prop_ro("format", [](const rldk::Run& r) { return r.source.format; })
      .def_prop_ro("compression", [](const rldk::Run& r) { return r.source.compression; })
      .def_ro("meta", &rldk::Run::meta)
      .def_ro("raw_to_canonical", &rldk::Run::raw_to_canonical)
      .def_ro("segments", &rldk::Run::segments)
      .def_prop_ro("metrics", [](const rldk::Run& r) {
        std::vector<std::string> names;
        for (const auto& [name, s] : r.series) names.push_back(name);
        return names;
      })
      .def("series", [](const rldk::Run& r, const std::string& name) -> const rldk::Series& {
        const rldk::Series* s = r.find(name);
        if (s == nullptr) raise_class("MetricNotFoundError", "no metric '" + name + "' in run '" + r.run_id + "'");
        return *s;
      }, "name"_a, nb::rv_policy::reference_internal)
      .def("has", [](const rldk::Run& r, const std::string& name) { return r.find(name) != nullptr; })
      .def_prop_ro("first_step", &rldk::Run::first_step)
      .def_prop_ro("last_step", &rldk::Run::last_step)
      .def_prop_ro("num_points", &rldk::Run::point_count)
      .def_prop_ro("diagnostics", [](const rldk::Run& r) {
        nb::list out;
        for (const auto& d : r.diagnostics.examples()) out.append(diagnostic_dict(d));
        return out;
      })
      .def_prop_ro("diagnostic_counts", [](const rldk::Run& r) { return r.diagnostics.counts(); });

  m.def("read_runs", [](const std::string& path, const std::string& run_id, bool canonical,
                        const std::string& format) {
    rldk::ReadOptions options;
    options.run_id = run_id;
    options.canonicalize = canonical;
    options.format = parse_format(format);
    rldk::Result<std::vector<rldk::Run>> result = rldk::Error{rldk::ErrorCode::io, "", ""};
    {
      nb::gil_scoped_release release;  // reading is pure C++; let other Python threads run
      result = rldk::read_runs(path, options);
    }
    std::vector<rldk::Run> runs = unwrap(std::move(result));
    for (auto& run : runs) replace_invalid_names(run);
    return runs;
  }, "path"_a, "run_id"_a = "", "canonical"_a = true, "format"_a = "auto");

  // rldk.scan(): what `rldk scan --json` runs (streaming, a folder's files on `threads` threads), returned as the
  // rldk.scan/v1 JSON text and each run's reader diagnostics (the JSON is parsed on the Python side, so both
  // surfaces have the same fields).
  m.def("scan_json", [](const std::vector<std::string>& sources, const std::vector<std::string>& only,
                        const std::vector<std::string>& skip, unsigned threads, size_t plan_steps) {
    const rldk::DetectorCatalog& catalog = rldk::builtin_detector_catalog();
    for (const auto* names : {&only, &skip}) {
      auto unknown = rldk::unknown_detector_names(*names, catalog);
      if (!unknown.empty()) {
        invalid_argument("unknown detector, fault type or area '" + unknown.front() + "' (see docs/detectors.md)");
      }
    }
    if (plan_steps == 0) invalid_argument("plan_steps must be at least 1");
    rldk::ScanOptions options;
    options.only = only;
    options.skip = skip;
    options.plan_steps = plan_steps;
    std::vector<rldk::RunScan> scans;
    std::vector<rldk::Diagnostics> diagnostics;
    std::string text;
    {
      nb::gil_scoped_release release;  // reading and scanning are pure C++
      for (const auto& source : sources) {
        auto runs = rldk::scan_source(source, options, threads);
        if (!runs.ok()) {
          nb::gil_scoped_acquire again;
          raise(runs.error());
        }
        for (auto& run : runs.value()) {
          scans.push_back(std::move(run.scan));
          diagnostics.push_back(std::move(run.diagnostics));
        }
      }
      text = rldk::scan_json(scans).dump(-1);
    }
    nb::list per_run;
    for (const auto& d : diagnostics) {
      nb::list one;
      for (const auto& example : d.examples()) one.append(diagnostic_dict(example));
      per_run.append(one);
    }
    return nb::make_tuple(text, per_run);
  }, "sources"_a, "only"_a, "skip"_a, "threads"_a, "plan_steps"_a);

  // rldk.reward.health(): the same accumulator and checks as `rldk reward health`, returned as its JSON text
  // (parsed into a dict on the Python side, so both surfaces have the same fields).
  m.def("reward_health_json", [](const std::vector<std::string>& sources, const std::vector<std::string>& rewards,
                                 const std::string& prompt, const std::string& completion, const std::string& step,
                                 const std::string& group, const std::string& gold, std::optional<double> range_lo,
                                 std::optional<double> range_hi, const std::vector<std::string>& pair_columns,
                                 const std::string& kl_log, const std::string& kl_metric) {
    rldk::RewardHealthOptions options;
    if (range_lo.has_value() != range_hi.has_value() || (range_lo && !(*range_lo < *range_hi))) {
      invalid_argument("reward_range must be two numbers (lo, hi) with lo < hi");
    }
    if (pair_columns.size() != 5) invalid_argument("pair_columns: chosen, rejected, chosen score, rejected score, label");
    options.range_lo = range_lo;
    options.range_hi = range_hi;
    rldk::SampleReadOptions read;
    read.columns = {step, prompt, completion, group, "", gold, rewards,
                    pair_columns[0], pair_columns[1], pair_columns[2], pair_columns[3], pair_columns[4]};
    rldk::Diagnostics diagnostics;
    std::string text;
    {
      nb::gil_scoped_release release;  // reading and the checks are pure C++
      if (!kl_log.empty()) {
        auto kl = rldk::kl_series_from_log(kl_log, kl_metric);
        if (!kl.ok()) {
          nb::gil_scoped_acquire again;
          raise(kl.error());
        }
        options.kl = std::move(kl).value();
      }
      auto report = rldk::reward_health(sources, read, options, diagnostics);
      if (!report.ok()) {
        nb::gil_scoped_acquire again;
        raise(report.error());
      }
      text = rldk::reward_health_json(report.value()).dump(-1);
    }
    return text;
  }, "sources"_a, "rewards"_a, "prompt"_a, "completion"_a, "step"_a, "group"_a, "gold"_a, "range_lo"_a = nb::none(),
     "range_hi"_a = nb::none(), "pair_columns"_a = std::vector<std::string>(5), "kl_log"_a = "", "kl_metric"_a = "");

  m.def("reward_drift_json", [](const std::string& a, const std::string& b, const std::string& a_col,
                                const std::string& b_col, const std::string& prompt, const std::string& completion,
                                const std::vector<std::pair<std::string, std::string>>& slices, uint64_t seed,
                                size_t bootstrap) {
    rldk::RewardDriftOptions options;
    for (auto* read : {&options.read_a, &options.read_b}) {
      read->completion_required = false;
      read->columns.prompt = prompt;
      read->columns.completion = completion;
    }
    if (!a_col.empty()) options.read_a.columns.rewards = {a_col};
    if (!b_col.empty()) options.read_b.columns.rewards = {b_col};
    options.slices = slices;
    options.seed = seed;
    options.bootstrap = bootstrap;
    rldk::Diagnostics diagnostics;
    rldk::Result<rldk::RewardDriftReport> report = rldk::Error{rldk::ErrorCode::io, "", ""};
    {
      nb::gil_scoped_release release;
      report = rldk::compare_reward_models({a}, {b}, options, diagnostics);
    }
    return rldk::reward_drift_json(unwrap(std::move(report))).dump(-1);
  }, "a"_a, "b"_a, "a_col"_a = "", "b_col"_a = "", "prompt"_a = "", "completion"_a = "",
     "slices"_a = std::vector<std::pair<std::string, std::string>>{}, "seed"_a = 0, "bootstrap"_a = 2000);

  // rldk.evals: the eval card of `rldk evals compare|aggregate` as its JSON text, and the statistics underneath it
  // on NumPy arrays (rldk.evals.aggregate, welch, ...), scores given per task: [task][run].
  m.def("evals_json", [](const std::vector<std::string>& sources, const std::vector<std::string>& columns, bool runs,
                         const std::string& at, int64_t step, bool compare, const std::string& a, const std::string& b,
                         const std::vector<std::string>& lower, double confidence, size_t reps,
                         const std::string& method, uint64_t seed, bool task_bootstrap, double margin, double effect,
                         double power, double gamma) {
    if (columns.size() != 5) invalid_argument("columns: arm, seed, task, item, score");
    if (method != "percentile" && method != "bca") invalid_argument("method must be 'percentile' or 'bca'");
    if (!(confidence > 0 && confidence < 1)) invalid_argument("confidence must lie between 0 and 1");
    if (reps < 1) invalid_argument("reps must be at least 1");
    rldk::evals::EvalData data;
    rldk::evals::EvalsOptions options;
    options.compare = compare;
    options.a = a;
    options.b = b;
    options.lower_is_better = lower;
    options.bootstrap.confidence = confidence;
    options.bootstrap.reps = reps;
    options.bootstrap.method = method == "bca" ? rldk::evals::IntervalMethod::bca
                                               : rldk::evals::IntervalMethod::percentile;
    options.bootstrap.seed = seed;
    options.bootstrap.task_bootstrap = task_bootstrap;
    options.margin = margin;
    options.effect = effect;
    options.power = power;
    options.gamma = gamma;
    rldk::Diagnostics diagnostics;
    rldk::Result<rldk::evals::EvalsReport> report = rldk::Error{rldk::ErrorCode::io, "", ""};
    {
      nb::gil_scoped_release release;
      for (const auto& source : sources) {
        rldk::Status status = rldk::Ok{};
        if (runs) {
          rldk::evals::RunEvalOptions ro;
          ro.at = at == "best" ? rldk::evals::EvalAt::best
                  : at == "step" ? rldk::evals::EvalAt::step
                                 : rldk::evals::EvalAt::last;
          ro.step = step;
          ro.lower_is_better = lower;
          status = rldk::evals::read_run_evals(source, ro, data, diagnostics);
        } else {
          rldk::evals::EvalReadOptions ro;
          ro.columns = {columns[0], columns[1], columns[2], columns[3], columns[4]};
          status = rldk::evals::read_eval_results(source, ro, data, diagnostics);
        }
        if (!status.ok()) {
          report = status.error();
          break;
        }
      }
      if (data.sources.size() == sources.size()) report = rldk::evals::evaluate(data, options);
    }
    return rldk::evals::evals_json(unwrap(std::move(report))).dump(-1);
  }, "sources"_a, "columns"_a, "runs"_a, "at"_a, "step"_a, "compare"_a, "a"_a, "b"_a, "lower"_a, "confidence"_a,
     "reps"_a, "method"_a, "seed"_a, "task_bootstrap"_a, "margin"_a, "effect"_a, "power"_a, "gamma"_a);

  auto bootstrap_options = [](size_t reps, double confidence, const std::string& method, uint64_t seed,
                              bool task_bootstrap) {
    if (method != "percentile" && method != "bca") invalid_argument("method must be 'percentile' or 'bca'");
    if (!(confidence > 0 && confidence < 1)) invalid_argument("confidence must lie between 0 and 1");
    rldk::evals::BootstrapOptions o;
    o.reps = reps;
    o.confidence = confidence;
    o.method = method == "bca" ? rldk::evals::IntervalMethod::bca : rldk::evals::IntervalMethod::percentile;
    o.seed = seed;
    o.task_bootstrap = task_bootstrap;
    return o;
  };
  auto interval_tuple = [](const rldk::evals::Interval& i) { return nb::make_tuple(i.estimate, i.low, i.high, i.note); };
  m.def("evals_aggregate", [=](const rldk::evals::TaskScores& scores, const std::string& name, size_t reps,
                              double confidence, const std::string& method, uint64_t seed, bool task_bootstrap,
                              double gamma) {
    rldk::evals::Aggregate a = rldk::evals::Aggregate::mean;
    if (name == "mean") a = rldk::evals::Aggregate::mean;
    else if (name == "median") a = rldk::evals::Aggregate::median;
    else if (name == "iqm") a = rldk::evals::Aggregate::iqm;
    else if (name == "optimality_gap") a = rldk::evals::Aggregate::optimality_gap;
    else invalid_argument("aggregate must be mean, median, iqm or optimality_gap, got '" + name + "'");
    auto o = bootstrap_options(reps, confidence, method, seed, task_bootstrap);
    rldk::evals::Interval i;
    {
      nb::gil_scoped_release release;
      i = reps == 0 ? rldk::evals::Interval{rldk::evals::aggregate(a, scores, gamma)}
                    : rldk::evals::stratified_bootstrap(scores, a, o, gamma);
    }
    return interval_tuple(i);
  }, "scores"_a, "name"_a, "reps"_a, "confidence"_a, "method"_a, "seed"_a, "task_bootstrap"_a, "gamma"_a);
  m.def("evals_probability_of_improvement", [=](const rldk::evals::TaskScores& x, const rldk::evals::TaskScores& y,
                                                size_t reps, double confidence, uint64_t seed, bool task_bootstrap) {
    auto o = bootstrap_options(reps, confidence, "percentile", seed, task_bootstrap);
    rldk::evals::Interval i;
    {
      nb::gil_scoped_release release;
      i = rldk::evals::probability_of_improvement_interval(x, y, o);
    }
    return interval_tuple(i);
  }, "x"_a, "y"_a, "reps"_a, "confidence"_a, "seed"_a, "task_bootstrap"_a);
  m.def("evals_bootstrap_mean", [=](const std::vector<double>& values, size_t reps, double confidence,
                                    const std::string& method, uint64_t seed) {
    return interval_tuple(rldk::evals::bootstrap_mean(values, bootstrap_options(reps, confidence, method, seed, false)));
  }, "values"_a, "reps"_a, "confidence"_a, "method"_a, "seed"_a);
  m.def("evals_profile", [=](const rldk::evals::TaskScores& scores, const std::vector<double>& tau, size_t reps,
                             double confidence, uint64_t seed) {
    auto p = rldk::evals::performance_profile(scores, tau, bootstrap_options(reps, confidence, "percentile", seed, false));
    return nb::make_tuple(p.fraction, p.low, p.high);
  }, "scores"_a, "tau"_a, "reps"_a, "confidence"_a, "seed"_a);
  m.def("evals_welch", [](const std::vector<double>& a, const std::vector<double>& b, double confidence) {
    auto w = rldk::evals::welch_t_test(a, b, confidence);
    auto g = rldk::evals::hedges_g(a, b, confidence);
    auto u = rldk::evals::mann_whitney_u(a, b);
    return nb::make_tuple(w.difference, w.t, w.df, w.p_value, w.ci_low, w.ci_high, g.value, g.ci_low, g.ci_high, u.u,
                          u.p_value, u.exact);
  }, "a"_a, "b"_a, "confidence"_a);
  m.def("evals_paired", [](const std::vector<double>& d, double confidence) {
    auto p = rldk::evals::paired_t_test(d, confidence);
    return nb::make_tuple(p.mean_difference, p.sd_difference, p.t, p.df, p.p_value, p.ci_low, p.ci_high, p.effect_dz);
  }, "differences"_a, "confidence"_a);
  m.def("evals_holm", [](const std::vector<double>& p) { return rldk::evals::holm_adjust(p); }, "p_values"_a);
  m.def("evals_seeds_needed", [](double effect, double sd_a, double sd_b, double alpha, double power, bool two_sided) {
    return rldk::evals::seeds_needed(effect, sd_a, sd_b, alpha, power, two_sided);
  }, "effect"_a, "sd_a"_a, "sd_b"_a, "alpha"_a, "power"_a, "two_sided"_a);
  m.def("evals_length_controlled", [=](const std::vector<double>& preference,
                                       const std::vector<double>& length_difference, size_t reps, double confidence,
                                       uint64_t seed) {
    if (preference.size() != length_difference.size()) {
      invalid_argument("preference and length_difference must have the same length");
    }
    auto r = rldk::evals::length_controlled_win_rate(preference, length_difference,
                                                     bootstrap_options(reps, confidence, "percentile", seed, false));
    return nb::make_tuple(r.n, interval_tuple(r.win_rate), interval_tuple(r.intercept), interval_tuple(r.slope),
                          r.mean_length_difference);
  }, "preference"_a, "length_difference"_a, "reps"_a, "confidence"_a, "seed"_a);
  m.def("evals_suite_json", [](const std::vector<std::string>& sources, const std::string& suite, size_t reps,
                               double confidence, uint64_t seed) {
    if (!(confidence > 0 && confidence < 1)) invalid_argument("confidence must lie between 0 and 1");
    rldk::evals::BootstrapOptions o;
    o.reps = reps;
    o.confidence = confidence;
    o.seed = seed;
    rldk::Diagnostics diagnostics;
    rldk::Result<rldk::evals::SuiteReport> report = rldk::Error{rldk::ErrorCode::io, "", ""};
    {
      nb::gil_scoped_release release;
      report = rldk::evals::evaluate_suite(sources, rldk::evals::builtin_suites(), suite, o, diagnostics);
    }
    return rldk::evals::suite_json(unwrap(std::move(report))).dump(-1);
  }, "sources"_a, "suite"_a, "reps"_a, "confidence"_a, "seed"_a);
  m.def("evals_suites_markdown", [] { return rldk::evals::suites_markdown(rldk::evals::builtin_suites()); });
  m.def("evals_welch_power", [](double effect, double sd_a, double sd_b, size_t n, double alpha, bool two_sided) {
    return rldk::evals::welch_power(effect, sd_a, sd_b, n, alpha, two_sided);
  }, "effect"_a, "sd_a"_a, "sd_b"_a, "n"_a, "alpha"_a, "two_sided"_a);
  m.def("evals_items_needed", [](double effect, double sd_d, double alpha, double power, bool two_sided) {
    return rldk::evals::items_needed(effect, sd_d, alpha, power, two_sided);
  }, "effect"_a, "sd_d"_a, "alpha"_a, "power"_a, "two_sided"_a);

  m.def("canonical_name", [](const std::string& raw) {
    return rldk::MetricDictionary::builtin().canonical_name(raw);
  }, "raw_name"_a);

  m.def("metric_info", [](const std::string& name) -> std::optional<nb::dict> {
    const auto& dict = rldk::MetricDictionary::builtin();
    const rldk::MetricInfo* info = dict.find(dict.canonical_name(name));
    if (info == nullptr) return std::nullopt;
    nb::dict out;
    out["name"] = info->name;
    out["unit"] = info->unit;
    out["aggregation"] = info->aggregation;
    out["description"] = info->description;
    out["aliases"] = info->aliases;
    return out;
  }, "name"_a);

  m.def("metric_names", [] {
    std::vector<std::string> names;
    for (const auto& info : rldk::MetricDictionary::builtin().metrics()) names.push_back(info.name);
    return names;
  });

  nb::class_<Monitor>(m, "Monitor")
      .def("__init__", [](Monitor* self, const std::vector<std::string>& presets,
                          const std::vector<std::string>& rule_files, const std::vector<std::string>& rule_texts,
                          const std::vector<std::string>& overrides, const std::string& alerts_path,
                          bool allow_shell) {
        rldk::RuleSet rules;
        for (const auto& p : presets) {
          auto preset = rldk::load_preset(p);
          if (!preset.ok()) raise(preset.error());
          if (auto st = rldk::merge_rule_sets(rules, std::move(preset).value()); !st.ok()) raise(st.error());
        }
        for (const auto& f : rule_files) {
          auto loaded = rldk::load_rules_file(f);
          if (!loaded.ok()) raise(loaded.error());
          if (auto st = rldk::merge_rule_sets(rules, std::move(loaded).value()); !st.ok()) raise(st.error());
        }
        for (const auto& t : rule_texts) {
          auto parsed = rldk::parse_rules(t, "<rules>");
          if (!parsed.ok()) raise(parsed.error());
          if (auto st = rldk::merge_rule_sets(rules, std::move(parsed).value()); !st.ok()) raise(st.error());
        }
        for (const auto& o : overrides) {
          if (auto st = rldk::apply_override(rules, o); !st.ok()) raise(st.error());
        }
        new (self) Monitor();
        self->engine = std::make_unique<rldk::RuleEngine>(std::move(rules));
        if (!alerts_path.empty()) {
          rldk::ActionOptions options;
          options.alerts_jsonl = alerts_path;
          options.console = nullptr;
          options.allow_shell = allow_shell;
          // In process, stopping is the caller's job (e.g. control.should_training_stop): record the request.
          options.stop = [](const rldk::Alert&) -> rldk::Result<std::string> {
            return std::string("stop requested from the trainer process");
          };
          self->dispatcher = std::make_unique<rldk::ActionDispatcher>(std::move(options));
        }
      }, "presets"_a, "rule_files"_a, "rule_texts"_a, "overrides"_a, "alerts_path"_a, "allow_shell"_a)
      .def("observe", [](Monitor& self, nb::handle step_value,
                         const std::vector<std::pair<std::string, double>>& metrics, const std::string& run_id,
                         std::optional<double> time) {
        const int64_t step = to_step(step_value, "step");
        const auto& dict = rldk::MetricDictionary::builtin();
        std::vector<rldk::Alert> alerts;
        for (const auto& [name, value] : metrics) {
          rldk::Observation o;
          o.run_id = run_id;
          o.raw_name = name;
          o.name = dict.canonical_name(name);
          o.step = step;
          o.value = value;
          o.time = time.value_or(rldk::NO_TIME);
          self.engine->observe(std::move(o), alerts);
        }
        self.engine->flush(alerts);  // the dict is the whole step
        return self.deliver(alerts);
      }, "step"_a.none(), "metrics"_a, "run_id"_a, "time"_a = nb::none())
      .def("report", [](const Monitor& self) { return self.engine->rule_report().dump(-1); })
      .def_prop_ro("alerts", [](const Monitor& self) { return self.history; })
      .def_prop_ro("rule_ids", [](const Monitor& self) {
        std::vector<std::string> ids;
        for (const auto& r : self.engine->rules().rules) ids.push_back(r.id);
        return ids;
      })
      .def_prop_ro("observations", [](const Monitor& self) { return self.engine->observations(); })
      .def_prop_ro("evaluation_errors", [](const Monitor& self) { return self.engine->evaluation_errors(); })
      // The action records (as alerts.jsonl holds them) for a session report; "[]" without an alerts file.
      .def("records", [](Monitor& self) {
        if (!self.dispatcher) return std::string("[]");
        self.dispatcher->drain();
        return self.dispatcher->records().dump(-1);
      })
      // The report `rldk monitor` would write for this session and its exit code, from the same core function.
      .def("session_report", [](Monitor& self, const std::string& fail_on, const std::vector<std::string>& sources) {
        rldk::SessionFacts facts;
        facts.fail_on = unwrap(rldk::parse_fail_on(fail_on));
        facts.sources = sources;
        rldk::Json records = rldk::Json::Array{};
        if (self.dispatcher) {
          self.dispatcher->drain();
          records = self.dispatcher->records();
        }
        return rldk::monitor_verdict(*self.engine, records, self.tally, facts).report.dump(-1);
      }, "fail_on"_a, "sources"_a)
      // End of data, as `rldk monitor` does when its input ends: rules whose detector judges a whole episode (a
      // steady trend, a shift still open at the end) give their verdict. Returns the alerts that raised. It runs
      // again only after new observations: logging may resume (a second trainer.train()) and end again.
      .def("finish", [](Monitor& self) {
        std::vector<rldk::Alert> alerts;
        if (self.finished_at != self.engine->observations()) {
          self.engine->finish(alerts);
          self.finished_at = self.engine->observations();
        }
        return self.deliver(alerts);
      })
      .def("close", [](Monitor& self) {
        if (self.dispatcher) self.dispatcher->drain();
      });

  // EventWriter is opened by a factory that can fail; the bound class holds the opened writer.
  nb::class_<EventWriterHandle>(m, "EventWriter")
      .def("__init__", [](EventWriterHandle* self, const std::string& path, const std::string& run_id, bool append) {
        new (self) EventWriterHandle{unwrap(rldk::EventWriter::open(path, run_id, append))};
      }, "path"_a, "run_id"_a = "", "append"_a = true)
      .def("log", [](EventWriterHandle& self, nb::handle step, const std::string& name, double value,
                     std::optional<double> time, const std::map<std::string, std::string>& tags,
                     const std::map<std::string, std::string>& meta, const std::string& run_id) {
        rldk::Event e;
        e.step = to_step(step, "step");
        e.name = name;
        e.value = value;
        e.wall_time = time.value_or(rldk::NO_TIME);
        e.tags = tags;
        e.meta = meta;
        e.run_id = run_id;
        rldk::EventWriter& writer = self.writer();  // raises while holding the GIL if closed
        rldk::Status status = rldk::Error{rldk::ErrorCode::io, "", ""};
        {
          nb::gil_scoped_release release;
          status = writer.log(e);
        }
        if (!status.ok()) raise(status.error());
      }, "step"_a.none(), "name"_a, "value"_a, "time"_a = nb::none(), "tags"_a = std::map<std::string, std::string>{},
         "meta"_a = std::map<std::string, std::string>{}, "run_id"_a = "")
      .def("log_metrics", [](EventWriterHandle& self, nb::handle step_value,
                             const std::vector<std::pair<std::string, double>>& metrics) {
        const int64_t step = to_step(step_value, "step");
        rldk::EventWriter& writer = self.writer();
        rldk::Status status = rldk::Error{rldk::ErrorCode::io, "", ""};
        {
          nb::gil_scoped_release release;
          status = writer.log_metrics(step, metrics);
        }
        if (!status.ok()) raise(status.error());
      }, "step"_a.none(), "metrics"_a)
      .def("close", [](EventWriterHandle& self) {
        if (self.writer_ptr) {
          rldk::Status status = self.writer_ptr->close();
          self.writer_ptr.reset();
          if (!status.ok()) raise(status.error());
        }
      })
      .def_prop_ro("closed", [](const EventWriterHandle& self) { return self.writer_ptr == nullptr; })
      .def_prop_ro("path", [](const EventWriterHandle& self) { return self.path; });
}

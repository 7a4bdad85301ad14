// The monitor's event loop. Inputs (followed files and folders, stdin, the trainer's output pipes) are multiplexed
// with poll(2); every batch of bytes goes through the same readers as `rldk info`, then the rule engine; the engine
// is flushed whenever the inputs are drained, so an alert is raised as soon as the line that causes it is read.
#include "rldk/monitor_session.h"

#include <poll.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <variant>

#include "act/monitor_outputs.h"
#include "io/lenient_json.h"
#include "io/mlflow_server.h"
#include "io/wandb_server.h"
#include "io/source_files.h"
#include "rldk/event_writer.h"
#include "rldk/follow.h"
#include "rldk/monitor.h"
#include "rldk/output_file.h"
#include "rldk/rollout_metrics.h"
#include "rldk/terminal_text.h"
#include "sys/gpu_memory.h"
#include "sys/process_tree.h"

namespace rldk {
namespace {

constexpr int LOOP_TIMEOUT_MS = 100;  // upper bound on one poll; inputs with inotify wake the loop sooner

// Turns reader points into observations for the engine (names by id, per reader).
class ObservationSink final : public PointSink {
 public:
  ObservationSink(RuleEngine& engine, std::vector<Alert>& alerts) : engine_(engine), alerts_(alerts) {}
  // The trainer's console is a fallback source: once a structured input (the RLDK_METRICS_PATH file, a source
  // named on the command line) has delivered a value, the console's copies of the same numbers would be observed
  // twice, under a second run id, and every alert would fire twice. `structured` is that shared flag: a structured
  // input's sink sets it, the console's sink (`fallback`) then drops what it reads.
  void share_structured_flag(bool* structured, bool fallback) {
    structured_ = structured;
    fallback_ = fallback;
  }
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo&) override {
    if (runs_.size() <= run) runs_.resize(run + 1);
    runs_[run].id = run_id;
    for (auto& m : runs_[run].metrics) m.handle = NO_HANDLE;
  }
  void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) override {
    auto& names = runs_[run].metrics;
    if (names.size() <= metric) names.resize(metric + 1);
    names[metric].canonical = canonical_name;
  }
  void on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) override {
    for (auto& m : runs_[run].metrics) {
      if (m.canonical == canonical_name && m.raw.empty()) {
        m.raw = raw_name;
        m.handle = NO_HANDLE;  // resolved again with the name as logged
      }
    }
  }
  void on_segment(uint32_t, const Segment&) override {}
  // Training settings the log printed reach the engine: detector rules ease by them as the scan does. The
  // trainer's console (the fallback) prints the config for the run whose metrics come through its metrics file,
  // under another run id: its settings hold for every run.
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override {
    double number = 0;
    if (key.rfind(SETTING_META_PREFIX, 0) != 0 || !io::parse_number(value, number)) return;
    engine_.setting(fallback_ ? std::string() : runs_[run].id, std::string_view(key).substr(SETTING_META_PREFIX.size()),
                    number);
  }
  void on_point(uint32_t run, uint32_t metric, const Point& p) override {
    if (structured_) {
      if (fallback_ && *structured_) return;
      if (!fallback_) *structured_ = true;
    }
    MetricNames& m = runs_[run].metrics[metric];
    if (m.handle == NO_HANDLE) m.handle = engine_.series(runs_[run].id, m.canonical, m.raw.empty() ? m.canonical : m.raw);
    engine_.observe(m.handle, p.step, p.value, p.wall_time, alerts_);
  }

 private:
  static constexpr RuleEngine::SeriesHandle NO_HANDLE = ~RuleEngine::SeriesHandle{0};
  struct MetricNames {
    std::string canonical, raw;
    RuleEngine::SeriesHandle handle = NO_HANDLE;  // the engine's series, resolved at the first point
  };
  struct RunNames {
    std::string id;
    std::vector<MetricNames> metrics;
  };
  RuleEngine& engine_;
  std::vector<Alert>& alerts_;
  std::vector<RunNames> runs_;
  bool* structured_ = nullptr;
  bool fallback_ = false;
};

// One input: where bytes come from, and the reader they go to (recreated when the file is truncated or replaced,
// since the new content starts over).
struct Input {
  std::string name;
  std::variant<std::monostate, FileFollower, DirectoryFollower, FdSource, std::unique_ptr<io::ServerFollower>>
      source;
  ReadOptions read;
  std::unique_ptr<ObservationSink> sink;
  std::unique_ptr<Diagnostics> diagnostics = std::make_unique<Diagnostics>();
  std::unique_ptr<StreamReader> reader;
  std::string reader_path;

  void reset_reader(const std::string& path) {
    if (reader) reader->finish();
    reader_path = path.empty() ? name : path;
    ReadOptions opts = read;
    opts.live = true;
    if (opts.run_id.empty()) opts.run_id = io::default_run_id(reader_path);
    reader = std::make_unique<StreamReader>(SourceInfo{reader_path, "", ""}, opts, *sink, *diagnostics);
  }

  int poll_fd() const {
    if (auto* f = std::get_if<FileFollower>(&source)) return f->poll_fd();
    if (auto* d = std::get_if<DirectoryFollower>(&source)) return d->poll_fd();
    if (auto* s = std::get_if<FdSource>(&source)) return s->poll_fd();
    return -1;
  }

  // Reads what is new; returns bytes delivered.
  uint64_t read_new() {
    FollowCallback on_event = [this](const FollowEvent& e) {
      switch (e.kind) {
        case FollowEventKind::data: reader->feed(e.bytes); break;
        case FollowEventKind::truncated:
        case FollowEventKind::replaced:
        case FollowEventKind::switched:
        case FollowEventKind::appeared: reset_reader(std::string(e.path)); break;
        default: break;
      }
    };
    uint64_t total = 0;
    for (;;) {
      Result<ReadProgress> progress = ReadProgress{};
      if (auto* f = std::get_if<FileFollower>(&source)) progress = f->read_new(on_event);
      else if (auto* d = std::get_if<DirectoryFollower>(&source)) progress = d->read_new(on_event);
      else if (auto* s = std::get_if<FdSource>(&source)) progress = s->read_new(on_event);
      else if (auto* m = std::get_if<std::unique_ptr<io::ServerFollower>>(&source)) {
        for (const auto& problem : (*m)->take_problems()) {
          std::fprintf(stderr, "rldk monitor: %s: %s\n", name.c_str(), problem.c_str());
        }
        std::string lines = (*m)->take_lines();
        reader->feed(lines);
        progress = ReadProgress{lines.size(), false};
      }
      if (!progress.ok()) {
        diagnostics->add(Diagnostic{"read_error", name, 0, progress.error().message});
        return total;
      }
      total += progress->bytes;
      if (!progress->more) return total;
    }
  }

  // Only a stream or a tracking-server run comes to an end; a followed file may always grow again.
  bool ended() const {
    if (auto* s = std::get_if<FdSource>(&source)) return s->at_end();
    if (auto* m = std::get_if<std::unique_ptr<io::ServerFollower>>(&source)) return (*m)->ended();
    return false;
  }
};

volatile std::sig_atomic_t interrupted = 0;       // the first signal that interrupted the session, 0 while none did
volatile std::sig_atomic_t signals_received = 0;  // how many arrived (a second one cuts the shutdown short)
extern "C" void on_interrupt(int signal) {
  if (!interrupted) interrupted = signal;
  signals_received = signals_received + 1;
}

// Thrown out of a batch read (--once) when a signal arrives, so a long read stops at once; caught around the read.
struct ReadInterrupted {};

// Stops a batch read (--once) on SIGINT/SIGTERM: the engine has what was evaluated so far, and the report says so.
class InterruptibleSink final : public PointSink {
 public:
  explicit InterruptibleSink(PointSink& inner) : inner_(inner) {}
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) override {
    inner_.on_run(run, run_id, source);
  }
  void on_metric(uint32_t run, uint32_t metric, const std::string& name) override { inner_.on_metric(run, metric, name); }
  void on_raw_name(uint32_t run, const std::string& raw, const std::string& name) override {
    inner_.on_raw_name(run, raw, name);
  }
  void on_segment(uint32_t run, const Segment& segment) override { inner_.on_segment(run, segment); }
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override { inner_.on_meta(run, key, value); }
  void on_point(uint32_t run, uint32_t metric, const Point& p) override {
    if (interrupted) throw ReadInterrupted{};
    inner_.on_point(run, metric, p);
  }

 private:
  PointSink& inner_;
};

// Numeric options must be finite and not negative; the message names the option.
Status check_seconds(double value, const char* option) {
  if (std::isfinite(value) && value >= 0) return Ok{};
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return Error{ErrorCode::invalid_argument,
               std::string(option) + " is " + buffer + "; expected a finite number of seconds >= 0", ""};
}

// Installs the SIGINT/SIGTERM handler for the session and restores the previous ones when the session ends.
class InterruptGuard {
 public:
  InterruptGuard() {
    interrupted = 0;
    signals_received = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

MonitorResult run_monitor(RuleSet rules, const MonitorOptions& options) {
  MonitorResult result;
  auto fail_on = parse_fail_on(options.fail_on);
  if (!fail_on.ok()) {
    result.exit_code = MONITOR_EXIT_INPUT_ERROR;
    result.error = fail_on.error().message;
    return result;
  }
  for (auto [value, option] : {std::pair{options.stop_grace_seconds, "--stop-grace"},
                               std::pair{options.idle_exit_seconds, "--idle-exit"},
                               std::pair{options.actions.deadline_seconds, "--action-deadline"}}) {
    if (Status s = check_seconds(value, option); !s.ok()) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = s.error().message;
      return result;
    }
  }
  if (options.pid && *options.pid <= 0) {
    result.exit_code = MONITOR_EXIT_INPUT_ERROR;
    result.error = "--pid " + std::to_string(*options.pid) + ": expected the positive process id of a running trainer";
    return result;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  // What the session reads and writes, checked before anything is created or opened.
  std::string metrics_path = options.metrics_path;
  if (!options.command.empty() && metrics_path.empty()) metrics_path = (fs::path(options.out_dir) / "metrics.jsonl").string();
  std::vector<std::string> read_paths = options.sources;
  if (!metrics_path.empty()) read_paths.push_back(metrics_path);
  ActionOptions action_options = options.actions;
  if (action_options.alerts_jsonl.empty()) action_options.alerts_jsonl = (fs::path(options.out_dir) / "alerts.jsonl").string();
  if (action_options.alerts_txt.empty()) action_options.alerts_txt = (fs::path(options.out_dir) / "alerts.txt").string();
  const std::string report_path =
      options.report_path.empty() ? (fs::path(options.out_dir) / "report.json").string() : options.report_path;
  if (Status s = act::check_monitor_outputs({action_options.alerts_jsonl, action_options.alerts_txt, report_path},
                                            read_paths, "--out " + options.out_dir);
      !s.ok()) {
    result.exit_code = MONITOR_EXIT_INPUT_ERROR;
    result.error = to_string(s.error());
    return result;
  }
  fs::create_directories(options.out_dir, ec);
  if (ec) {
    result.exit_code = MONITOR_EXIT_INPUT_ERROR;
    result.error = options.out_dir + ": cannot create the output folder: " + ec.message();
    return result;
  }
  // Alerts and the report may be named files elsewhere (--alerts, --report): their folders are made too.
  for (const std::string& file : {action_options.alerts_jsonl, report_path}) {
    fs::path parent = fs::path(file).parent_path();
    if (parent.empty()) continue;
    fs::create_directories(parent, ec);
    if (ec) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = parent.string() + ": cannot create the folder for " + file + ": " + ec.message();
      return result;
    }
  }
  RuleEngine engine(std::move(rules));
  std::vector<Alert> alerts;

  // The trainer, if we launch it.
  std::optional<ChildProcess> child;
  std::optional<ProcessIdentity> external;
  if (options.pid) {
    auto identity = ProcessIdentity::capture(static_cast<pid_t>(*options.pid));
    if (!identity.ok()) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = "--pid " + std::to_string(*options.pid) + ": " + identity.error().message;
      return result;
    }
    external = identity.value();
  }

  // Sentinel files may go under the output folder and the folders of the runs read (not inside a folder being
  // read: the output guard refuses that).
  action_options.inputs = read_paths;
  if (action_options.write_roots.empty()) {
    action_options.write_roots.push_back(options.out_dir);
    for (const auto& path : read_paths) {
      if (path != "-" && !fs::is_directory(path, ec)) {
        fs::path parent = fs::path(path).parent_path();
        action_options.write_roots.push_back(parent.empty() ? "." : parent.string());
      }
    }
  }
  std::optional<StopReport> stop_report;
  std::string stop_error;
  auto grace = std::chrono::milliseconds(static_cast<int64_t>(options.stop_grace_seconds * 1000));
  std::deque<Input> inputs;  // a deque: references to inputs (console_input) stay valid as more are added
  auto passthrough = [&](OutputStream stream, std::string_view bytes) {
    if (options.passthrough) {
      // The trainer's own console goes out unfiltered (its progress bars and colours are its own, not log data).
      std::FILE* raw = stream == OutputStream::out ? raw_stdout() : raw_stderr();
      std::fwrite(bytes.data(), 1, bytes.size(), raw);
      std::fflush(raw);
    }
  };
  Input* console_input = nullptr;  // the trainer's output, parsed as console text
  auto on_child_output = [&](OutputStream stream, std::string_view bytes) {
    passthrough(stream, bytes);
    if (console_input) console_input->reader->feed(bytes);
  };
  action_options.stop = [&](const Alert&) -> Result<std::string> {
    if (child) {
      // Reads (and passes through) the trainer's last words while it shuts down.
      stop_report = child->terminate(grace, on_child_output);
      std::string sent;
      for (int s : stop_report->signals) sent += (sent.empty() ? "" : ", ") + signal_name(s);
      return "stopped the trainer (pid " + std::to_string(child->pid()) + ", sent " + (sent.empty() ? "nothing" : sent) + ")";
    }
    if (external) {
      auto report = terminate_external(*external, grace);
      if (!report.ok()) return report.error();
      stop_report = report.value();
      return "stopped " + external->describe();
    }
    if (options.once) return std::string("nothing to stop: a finished log was read (--once)");
    return Error{ErrorCode::invalid_argument, "no trainer to stop (give --cmd or --pid)", ""};
  };
  // From here on a signal ends the session with a report: installed before the first read, so an interrupted
  // --once drain still reports what it evaluated.
  InterruptGuard interrupt_guard;
  ActionDispatcher dispatcher(action_options);
  AlertTally tally;
  auto dispatch_pending = [&] {
    for (const Alert& a : alerts) {
      tally.add(a);
      dispatcher.dispatch(a);
    }
    alerts.clear();
  };

  // Inputs.
  bool structured_delivered = false;  // see ObservationSink::share_structured_flag
  auto add_input = [&](const std::string& name, ReadOptions read, bool fallback = false) -> Input& {
    Input& in = inputs.emplace_back();
    in.name = name;
    in.read = std::move(read);
    in.sink = std::make_unique<ObservationSink>(engine, alerts);
    in.sink->share_structured_flag(&structured_delivered, fallback);
    in.reset_reader(name);
    return in;
  };
  std::vector<std::string> sources = options.sources;
  if (!metrics_path.empty() && std::find(sources.begin(), sources.end(), metrics_path) == sources.end()) {
    fs::remove(metrics_path, ec);  // a stale file from an earlier run must not be read as this run's metrics
    sources.push_back(metrics_path);
  }
  // Rollout folders: each step's samples become rollout metrics for the same engine.
  std::vector<RolloutFollower> rollout_followers;
  for (const auto& folder : options.rollouts) {
    if (!fs::is_directory(folder, ec) && fs::exists(folder, ec)) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = folder + ": --rollouts takes a folder of per-step sample files (e.g. the trainer's completions/)";
      return result;
    }
    rollout_followers.emplace_back(folder, RolloutFollowOptions{});
  }
  Diagnostics rollout_problems;
  auto observe_rollouts = [&](bool to_the_end) {
    uint64_t got = 0;
    for (auto& follower : rollout_followers) {
      for (const RolloutMetric& m : to_the_end ? follower.finish(rollout_problems) : follower.poll(rollout_problems)) {
        Observation o;
        o.run_id = "rollouts";
        o.name = o.raw_name = m.name;
        o.step = m.step;
        o.value = m.value;
        o.time = NAN;
        engine.observe(std::move(o), alerts);
        ++got;
      }
    }
    return got;
  };
  if (options.once) {
    observe_rollouts(true);
    engine.flush(alerts);
    dispatch_pending();
  }
  if (options.once) {
    // Finished logs: the batch readers (compression, folders of runs) feed the same engine.
    for (const auto& src : sources) {
      if (interrupted) break;
      ObservationSink observations(engine, alerts);
      InterruptibleSink sink(observations);
      Diagnostics problems;
      Status read = Ok{};
      try {
        read = read_source(src, options.read, sink, problems);
      } catch (const ReadInterrupted&) {
        // What was read so far is still evaluated and reported below.
      }
      if (!read.ok()) {
        result.exit_code = MONITOR_EXIT_INPUT_ERROR;
        result.error = to_string(read.error());
        return result;
      }
      for (const auto& d : problems.examples()) std::fprintf(stderr, "rldk monitor: input problem: %s\n", to_string(d).c_str());
      engine.flush(alerts);
      dispatch_pending();
    }
    sources.clear();
  }
  // Runs on tracking servers: a first pass reads what is there (an error here is the user's to fix: a wrong run id,
  // a missing key), then a follower polls for more.
  struct ServerRun {
    std::string name, run_id;
    std::unique_ptr<io::ServerPoller> poller;
  };
  std::vector<ServerRun> server_runs;
  for (const auto& server_run : options.mlflow_runs) {
    server_runs.push_back({"MLflow run " + server_run.run_id, server_run.run_id,
                           std::make_unique<io::MlflowServerPoller>(io::mlflow_server_run_from_environment(
                               server_run.tracking_uri, server_run.run_id))});
  }
  for (const auto& path : options.wandb_runs) {
    auto run = io::wandb_server_run_from_environment(path);
    if (!run.ok()) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = "W&B run " + path + ": " + to_string(run.error());
      return result;
    }
    std::string run_id = run->run;
    server_runs.push_back({"W&B run " + path, run_id, std::make_unique<io::WandbServerPoller>(std::move(run).value())});
  }
  for (auto& [name, run_id, poller] : server_runs) {
    if (interrupted) break;
    act::Cancel no_deadline;
    auto first = poller->poll(no_deadline);
    if (!first.ok()) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = name + ": " + to_string(first.error());
      return result;
    }
    ReadOptions read = options.read;
    read.format = Format::jsonl;
    if (read.run_id.empty()) read.run_id = run_id;
    Input& in = add_input(name, read);
    in.reader->feed(first->lines);
    if (options.once) {
      // Read to its end: the first pass read every value logged so far.
      in.reader->finish();
      in.reader.reset();
      engine.flush(alerts);
      dispatch_pending();
      inputs.pop_back();
      continue;
    }
    in.source = std::make_unique<io::ServerFollower>(std::move(poller), options.server_poll_seconds);
  }
  for (const auto& src : sources) {
    Input& in = add_input(src, options.read);
    if (src == "-") {
      in.source = FdSource::standard_input();
    } else if (fs::is_directory(src, ec)) {
      auto d = DirectoryFollower::open(src);
      if (!d.ok()) {
        result.exit_code = MONITOR_EXIT_INPUT_ERROR;
        result.error = to_string(d.error());
        return result;
      }
      in.source = std::move(d).value();
    } else {
      auto f = FileFollower::open(src);
      if (!f.ok()) {
        result.exit_code = MONITOR_EXIT_INPUT_ERROR;
        result.error = to_string(f.error());
        return result;
      }
      in.source = std::move(f).value();
    }
  }
  if (!options.command.empty()) {
    SpawnOptions spawn;
    spawn.environment.push_back({"RLDK_METRICS_PATH", metrics_path});
    spawn.environment.push_back({"PYTHONUNBUFFERED", "1"});  // a Python trainer's prints arrive as they happen
    // What `sh -c COMMAND` runs, in its own process group, which stop actions and interrupts signal as a whole;
    // exec_form() lets a plain `python train.py` replace the shell so the trainer gets the signals itself.
    auto started = ChildProcess::spawn(exec_form(options.command), spawn);
    if (!started.ok()) {
      result.exit_code = MONITOR_EXIT_INPUT_ERROR;
      result.error = "cannot start the trainer: " + started.error().message;
      return result;
    }
    child.emplace(std::move(started).value());
    if (options.read_command_output) {
      ReadOptions console = options.read;
      console.format = Format::console;
      if (console.run_id.empty()) console.run_id = "trainer";
      console_input = &add_input("trainer output", console, /*fallback=*/true);
    }
  }

  // The trainer's process tree, sampled as sys/* metrics: a leak shows even when the trainer logs no memory.
  std::unique_ptr<EventWriter> sys_writer;
  int64_t sys_samples = 0;
  double last_cpu_seconds = NAN;
  std::unique_ptr<sys::GpuMemoryReader> gpu_reader;
  auto last_sys_sample = std::chrono::steady_clock::now();
  const auto launched = last_sys_sample;
  // Memory rises while a trainer imports its libraries and loads its model, for seconds or minutes, and that is
  // not a leak: a leak grows with training steps. So the samples go to the rules only from the trainer's first
  // logged metric on (sys.jsonl has them all). A trainer that logs nothing rldk can read is judged from
  // kStartupSeconds after launch, so its leak is still caught.
  constexpr double kStartupSeconds = 600.0;
  uint64_t sys_observed = 0;  // sys observations given to the engine: what it counted beyond them came from the trainer
  bool training_started = false;
  auto sample_system = [&] {
    if (!child || options.sys_sample_seconds <= 0) return;
    auto now = std::chrono::steady_clock::now();
    double since = std::chrono::duration<double>(now - last_sys_sample).count();
    if (sys_samples > 0 && since < options.sys_sample_seconds) return;
    auto sample = sys::sample_process_tree(child->pid());
    // No resident memory: the trainer is between fork and exec, or exiting; not a reading of its use.
    if (!sample || sample->rss_bytes == 0) return;
    last_sys_sample = now;
    ++sys_samples;
    double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<std::pair<std::string, double>> values = {
        {"sys/rss", static_cast<double>(sample->rss_bytes)},
        {"sys/open_files", static_cast<double>(sample->open_files)},
        {"sys/processes", static_cast<double>(sample->processes)}};
    if (std::isfinite(last_cpu_seconds) && since > 0) {
      values.emplace_back("sys/cpu_percent", 100.0 * (sample->cpu_seconds - last_cpu_seconds) / since);
    }
    last_cpu_seconds = sample->cpu_seconds;
    // GPU memory through NVML, where there is an NVIDIA driver (opened at the first sample, once).
    if (!gpu_reader) gpu_reader = std::make_unique<sys::GpuMemoryReader>();
    if (auto gpu = gpu_reader->sample(sample->pids)) {
      values.emplace_back("sys/gpu_memory", static_cast<double>(gpu->process_bytes));
      values.emplace_back("sys/gpu_memory_device", static_cast<double>(gpu->device_used_bytes));
    }
    if (!sys_writer) {
      auto opened = EventWriter::open((fs::path(options.out_dir) / "sys.jsonl").string(), "sys", false);
      if (opened.ok()) sys_writer = std::move(opened).value();
    }
    if (sys_writer) (void)sys_writer->log_metrics(sys_samples, values);
    if (!training_started) {
      training_started = engine.observations() > sys_observed ||
                         std::chrono::duration<double>(now - launched).count() >= kStartupSeconds;
      if (!training_started) return;
    }
    sys_observed += values.size();
    for (const auto& [name, value] : values) {
      Observation o;
      o.run_id = "sys";
      o.name = o.raw_name = name;
      o.step = sys_samples;
      o.value = value;
      o.time = wall;
      engine.observe(std::move(o), alerts);
    }
  };

  auto last_data = std::chrono::steady_clock::now();
  bool child_done = false;
  for (;;) {
    uint64_t got = 0;
    // The trainer's console first: what it printed before it wrote its metrics file (the settings of its config
    // dump, such as an entropy bonus) is then known when the file's points are judged, whichever source the poll saw
    // first.
    if (child) child->read_output(on_child_output);
    for (auto& in : inputs) {
      if (&in == console_input) continue;
      got += in.read_new();
    }
    if (child) {
      if (!child_done && child->try_wait() && !child->output_open()) child_done = true;
      if (!child_done) sample_system();
    }
    if (!options.once) got += observe_rollouts(false);
    engine.flush(alerts);
    dispatch_pending();
    if (got > 0) last_data = std::chrono::steady_clock::now();
    if (interrupted) break;
    if (options.once) break;  // the sources were read above
    if (child && (child_done || stop_report)) {
      if (!child->status()) child->wait();
      // Whatever the trainer wrote last, its console first (as above).
      child->read_output(on_child_output);
      for (auto& in : inputs) {
        if (&in != console_input) in.read_new();
      }
      observe_rollouts(true);  // the trainer's last steps, settled or not: it has stopped writing
      engine.flush(alerts);
      dispatch_pending();
      break;
    }
    if (!inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [](const Input& i) { return i.ended(); })) break;
    if (!child && options.idle_exit_seconds > 0 &&
        std::chrono::steady_clock::now() - last_data > std::chrono::duration<double>(options.idle_exit_seconds)) {
      break;
    }
    if (got > 0) continue;  // more may be waiting
    std::vector<pollfd> fds;
    for (auto& in : inputs) {
      int fd = in.poll_fd();
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    if (child) {
      for (int fd : {child->stdout_fd(), child->stderr_fd(), child->exit_fd()}) {
        if (fd >= 0) fds.push_back({fd, POLLIN, 0});
      }
    }
    int timeout = LOOP_TIMEOUT_MS;
    for (auto& in : inputs) {
      if (auto* f = std::get_if<FileFollower>(&in.source)) timeout = std::min(timeout, f->suggested_timeout_ms());
      if (auto* d = std::get_if<DirectoryFollower>(&in.source)) timeout = std::min(timeout, d->suggested_timeout_ms());
    }
    ::poll(fds.data(), fds.size(), timeout);
  }
  // An interrupted --once read did not reach the end of its data: no end-of-data verdicts on part of it.
  const bool read_cut_short = options.once && interrupted != 0;
  for (auto& in : inputs) {
    if (in.reader) in.reader->finish();
  }
  if (!read_cut_short) engine.finish(alerts);  // the data has ended: whole-episode detectors give their verdict
  dispatch_pending();
  // Webhooks and shell actions get --action-deadline seconds, no more; a signal meanwhile (the one that ends a
  // --once drain, or a second Ctrl-C of a live session) abandons them at once.
  const int signals_before_close = signals_received;
  dispatcher.close([&] { return signals_received != signals_before_close; });
  const int interrupt_signal = interrupted;
  // --once has no natural end by signal: interrupted while reading or draining, it exits as the shell reports the
  // signal. A live session ends by a signal as a matter of course, and its verdict stands.
  const bool cut_short = options.once && interrupt_signal != 0;

  SessionFacts facts;
  facts.fail_on = fail_on.value();
  for (const auto& in : inputs) facts.sources.push_back(in.name);
  for (const auto& follower : rollout_followers) facts.sources.push_back(follower.path());
  if (child) {
    if (interrupted && !child->status()) {
      stop_report = child->terminate(grace, passthrough);  // the user stopped the monitor: stop its trainer too
    }
    result.command_status = child->status() ? child->status() : std::optional<ExitStatus>(child->wait());
    CommandOutcome outcome;
    outcome.command = options.command;
    outcome.exit = result.command_status->describe();
    outcome.exit_code = result.command_status->shell_code();
    outcome.success = result.command_status->success();
    if (stop_report) {
      outcome.signals_sent.emplace();
      for (int s : stop_report->signals) outcome.signals_sent->push_back(signal_name(s));
    }
    facts.command = std::move(outcome);
  }
  Diagnostics problems;
  for (const auto& in : inputs) problems.merge(*in.diagnostics);
  problems.merge(rollout_problems);
  facts.input_problems = problems.total();

  if (interrupt_signal) facts.interrupted = signal_name(interrupt_signal);
  facts.delivery = dispatcher.delivery();

  MonitorVerdict verdict = monitor_verdict(engine, dispatcher.records(), tally, facts);
  result.exit_code = cut_short ? 128 + interrupt_signal : verdict.exit_code;
  result.observations = engine.observations();
  result.alerts = tally.alerts;
  result.stop_requested = tally.stop_requested();
  result.report = std::move(verdict.report);
  if (Status written = write_file_atomic(report_path, result.report.dump()); !written.ok()) {
    std::fprintf(stderr, "rldk monitor: %s\n", to_string(written.error()).c_str());
  }

  if (options.print_summary) {
    std::fprintf(stderr, "\nrldk monitor: %llu observations, %llu alert%s%s; report in %s\n",
                 static_cast<unsigned long long>(result.observations), static_cast<unsigned long long>(result.alerts),
                 result.alerts == 1 ? "" : "s",
                 result.stop_requested ? (stop_report ? ", trainer stopped" : ", a stop was requested") : "",
                 report_path.c_str());
    if (cut_short) std::fprintf(stderr, "rldk monitor: interrupted by %s; the report holds what was evaluated\n",
                                signal_name(interrupt_signal).c_str());
    for (const auto& [kind, d] : facts.delivery) {
      if (d.undelivered() > 0) {
        std::fprintf(stderr, "rldk monitor: %llu of %llu %s actions not delivered (failed %llu, dropped %llu, "
                             "abandoned at the deadline %llu)\n",
                     static_cast<unsigned long long>(d.undelivered()), static_cast<unsigned long long>(d.queued),
                     kind.c_str(), static_cast<unsigned long long>(d.failed),
                     static_cast<unsigned long long>(d.dropped), static_cast<unsigned long long>(d.abandoned));
      }
    }
    for (const auto& d : problems.examples()) std::fprintf(stderr, "  input problem: %s\n", to_string(d).c_str());
  }
  return result;
}

}  // namespace rldk

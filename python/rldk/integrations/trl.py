"""RLDKCallback: rldk's guard rules inside a Hugging Face trainer (TRL GRPO/PPO/DPO/RLOO, or transformers.Trainer).

    from rldk.integrations.trl import RLDKCallback
    trainer = GRPOTrainer(..., callbacks=[RLDKCallback(preset="grpo_safe")])
    trainer.train()              # a stop rule ends training early; report in <output_dir>/rldk/report.json

Every ``on_log`` dict goes to the rule engine in process (the same engine and presets as ``rldk monitor``) and, under
canonical metric names, to <out_dir>/metrics.jsonl. When a rule's actions include ``stop``, the callback sets
``control.should_training_stop`` (the Trainer loop ends after the current step). A trainer whose loop never reads
that flag (TRL's experimental PPOTrainer, custom loops) is stopped by raising ``TrainingStopped`` at its next step;
see ``raise_on_stop``. The report is written at the end of training and before any TrainingStopped is raised.

With ``tracker=ExperimentTracker(...)`` (rldk.tracking) the callback also writes the run's manifest to
<output_dir>/rldk_manifest.json: it starts the tracker at on_train_begin (unless already started), records the
trainer's arguments as config and the model (and tokenizer) fingerprints, and finishes it at on_train_end.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

from transformers import TrainerCallback

from .session import MonitorSession, describe_alert, log
from .stop import TrainingStopped

# Preset chosen by preset="auto", from the class name of the trainer's arguments (GRPOConfig, DPOConfig, ...).
AUTO_PRESETS = (
    ("GRPO", "grpo_safe"), ("RLOO", "grpo_safe"), ("PPO", "ppo_safe"), ("DPO", "dpo_basic"), ("KTO", "dpo_basic"),
)
DEFAULT_PRESET = "grpo_safe"
RAISE_MODES = ("auto", "always", "never")


def auto_preset(args) -> str:
    name = type(args).__name__.upper()
    for prefix, preset in AUTO_PRESETS:
        if prefix in name:
            return preset
    return DEFAULT_PRESET


class RLDKCallback(TrainerCallback):
    def __init__(self, preset: Union[str, Sequence[str], None] = "auto", rules: Union[str, Sequence[str], None] = None,
                 rules_yaml: Union[str, Sequence[str], None] = None, set_rule: Optional[Sequence[str]] = None,
                 out_dir: Optional[str] = None, run_id: Optional[str] = None, write_events: bool = True,
                 stop_training: bool = True, save_on_stop: bool = False, raise_on_stop: str = "auto",
                 fail_on: str = "stop", allow_shell: bool = False, print_alerts: bool = True, tracker=None):
        """
        preset        built-in preset name(s) (``rldk rules list``); "auto" picks one from the trainer's config class
                      (GRPO/RLOO: grpo_safe, PPO: ppo_safe, DPO/KTO: dpo_basic, anything else: grpo_safe); None
                      with ``rules``/``rules_yaml`` to use only your own rules.
        rules         rule file path(s) (YAML, as for ``rldk monitor --rules``); ``rules_yaml``: rule text(s).
        set_rule      overrides "RULE_ID.FIELD=VALUE", as ``--set-rule``.
        out_dir       where metrics.jsonl, alerts.jsonl and report.json go; default <args.output_dir>/rldk.
        run_id        run id in events and alerts; default args.run_name, else the output folder's name.
        write_events  write every logged number to metrics.jsonl under its canonical name.
        stop_training on an alert whose rule has a stop action, set control.should_training_stop.
        save_on_stop  also set control.should_save, so the Trainer checkpoints the step it stops at.
        raise_on_stop "auto": raise TrainingStopped if the trainer takes another step after a stop was requested
                      (it ignores should_training_stop); "always": raise at once from on_log; "never": only set
                      the flag.
        fail_on       the level that makes report.json's summary.exit_code 1 (never, warn, stop), as --fail-on.
        print_alerts  log each alert on the "rldk" logger (warning level), on the main process.
        tracker       an rldk.tracking.ExperimentTracker: its manifest goes to <args.output_dir>/rldk_manifest.json
                      with the trainer's arguments as config, the model (and tokenizer) fingerprinted at the start of
                      training; finished at on_train_end, or marked failed when rldk stops training by raising.
        """
        if raise_on_stop not in RAISE_MODES:
            raise ValueError("raise_on_stop is %r; expected one of %s" % (raise_on_stop, ", ".join(RAISE_MODES)))
        if preset is None and rules is None and rules_yaml is None:
            raise ValueError("RLDKCallback needs preset=, rules= or rules_yaml=")
        self.preset = preset
        self.rules = rules
        self.rules_yaml = rules_yaml
        self.set_rule = set_rule
        self.out_dir = out_dir
        self.run_id = run_id
        self.write_events = write_events
        self.stop_training = stop_training
        self.save_on_stop = save_on_stop
        self.raise_on_stop = raise_on_stop
        self.fail_on = fail_on
        self.allow_shell = allow_shell
        self.print_alerts = print_alerts
        self.session: Optional[MonitorSession] = None
        self.stop_requested_at: Optional[int] = None  # global_step at which should_training_stop was set
        self.tracker = tracker

    # ------------------------------------------------------------------ what a user reads after training
    @property
    def alerts(self):
        return self.session.alerts if self.session else []

    @property
    def stop_alert(self) -> Optional[dict]:
        return self.session.stop_alert if self.session else None

    @property
    def report_path(self) -> Optional[str]:
        return self.session.report_path if self.session else None

    @property
    def metrics_path(self) -> Optional[str]:
        return self.session.metrics_path if self.session else None

    # ------------------------------------------------------------------ trainer hooks
    def on_train_begin(self, args, state, control, **kwargs):
        if self.session is None:
            self.session = self._open_session(args, state)
        else:
            self.session.reopen_events()
        if self.tracker is not None and state.is_world_process_zero and not self.tracker.finished:
            self._start_tracker(args, kwargs)
        return control

    def on_step_begin(self, args, state, control, **kwargs):
        self._raise_if_ignored(state)
        return control

    def on_step_end(self, args, state, control, **kwargs):
        self._raise_if_ignored(state)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.session is None:  # a log before training started (e.g. trainer.evaluate() first)
            self.session = self._open_session(args, state)
        self.session.log(state.global_step, logs or {})
        stop = self.session.stop_alert
        if stop is not None and self.stop_training and self.stop_requested_at is None:
            self.stop_requested_at = state.global_step
            control.should_training_stop = True
            if self.save_on_stop:
                control.should_save = True
            if self.raise_on_stop == "always":
                self._raise(stop, state.global_step, "the callback was created with raise_on_stop=\"always\"")
        return control

    def on_train_end(self, args, state, control, **kwargs):
        if self.session is not None:
            self.session.finish()
            if state.is_world_process_zero and self.print_alerts and self.session.report_path:
                log.info("rldk: %d alert(s); report in %s", len(self.session.alerts), self.session.report_path)
        if self.tracker is not None and state.is_world_process_zero and self.tracker.started:
            self.tracker.finish_experiment()
        return control

    # ------------------------------------------------------------------ helpers
    def _open_session(self, args, state) -> MonitorSession:
        output_dir = getattr(args, "output_dir", None) or "."
        out_dir = self.out_dir or os.path.join(output_dir, "rldk")
        run_id = self.run_id or getattr(args, "run_name", None) or os.path.basename(os.path.abspath(output_dir))
        preset = auto_preset(args) if self.preset == "auto" else self.preset
        main = state.is_world_process_zero
        # Every rank evaluates the rules (they all see the same logged values, so they all stop at the same step);
        # only the main process writes files and prints.
        return MonitorSession(out_dir if main else None, preset=preset, rules=self.rules, rules_yaml=self.rules_yaml,
                              set_rule=self.set_rule, run_id=run_id, write_events=self.write_events,
                              fail_on=self.fail_on, allow_shell=self.allow_shell,
                              on_alert=self._print_alert if main and self.print_alerts else None)

    def _start_tracker(self, args, kwargs) -> None:
        tracker = self.tracker
        tracker.use_manifest_path(os.path.join(getattr(args, "output_dir", None) or ".", "rldk_manifest.json"))
        tracker.start_experiment()
        to_dict = getattr(args, "to_dict", None)
        trainer_args = to_dict() if callable(to_dict) else dict(vars(args))  # to_dict() redacts hub tokens
        # Hyperparameters the script set itself take precedence over the trainer's arguments of the same name.
        tracker.set_config({**trainer_args, **tracker.hyperparameters})
        tracker.add_metadata("trainer_args_class", type(args).__name__)
        model = kwargs.get("model")
        if model is not None and "model" not in tracker.models:  # the script may have tracked it already
            tracker.track_model(model, "model")
        tokenizer = kwargs.get("processing_class") or kwargs.get("tokenizer")
        if tokenizer is not None and "tokenizer" not in tracker.tokenizers and (
                hasattr(tokenizer, "backend_tokenizer") or hasattr(tokenizer, "get_vocab")):
            tracker.track_tokenizer(tokenizer, "tokenizer")

    @staticmethod
    def _print_alert(alert: dict) -> None:
        log.warning("rldk: %s%s", "STOP " if alert["stop"] else "", describe_alert(alert))

    def _raise_if_ignored(self, state) -> None:
        if (self.raise_on_stop == "auto" and self.stop_requested_at is not None
                and state.global_step > self.stop_requested_at):
            self._raise(self.session.stop_alert, state.global_step,
                        "the trainer went on to step %d after control.should_training_stop was set at step %d "
                        "(its loop does not read that flag)" % (state.global_step, self.stop_requested_at))

    def _raise(self, alert: dict, step: int, why: str) -> None:
        report_path = self.session.finish()
        if self.tracker is not None and self.tracker.started and not self.tracker.finished:
            self.tracker.add_metadata("error", "TrainingStopped: %s at step %d" % (describe_alert(alert), step))
            self.tracker.finish_experiment(status="failed")
        where = "; report: %s" % report_path if report_path else ""
        raise TrainingStopped("rldk stopped training: %s; %s%s" % (describe_alert(alert), why, where),
                              alert=alert, step=int(alert["step"]), report_path=report_path,
                              alerts=self.session.alerts)


__all__ = ["RLDKCallback", "TrainingStopped", "auto_preset"]

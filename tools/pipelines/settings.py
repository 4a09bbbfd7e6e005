"""One vocabulary for the pipeline settings, Python's copy: the names of the model's scenario format
(docs/scenarios.md) are the reference, and the Python pipelines take the same names for the same
settings. The C++ copy is src/model/settings.h (read by the scenario parser and by the LibTorch
workload of `racelab live torch`); tests/live/check_settings.py fails when the two drift.

Imported by the drafter pipelines (pipeline.py, drafter_standin.py, drafter_torch.py),
train_queue_torch.py, tests/live/pipelines/train_queue.py and tools/conformance.py, which derives
a case's script arguments from its scenario file with script_args().

Spelling rules: a scenario key becomes an option with `_` as `-` ([warmup] keys prefixed
`warmup-`), and a boolean key whose default is true becomes `--no-KEY` ([warmup] backward = false
is `--no-warmup-backward`, [torch] automatic_dynamic = false is `--no-automatic-dynamic`). Old
spellings still work, with one warning line on stderr (DEPRECATED).
"""
import argparse
import sys

# [pipeline] attention, as src/model/settings.h kAttentions.
ATTENTIONS = ("flex_compiled", "flex_eager", "sdpa_chunked", "sdpa_fused")
# [warmup] mode, as kWarmupModes; the live pipelines have every mode but the model-only one (no
# on-disk compile cache for another process to warm).
WARMUP_MODES = ("none", "sequential", "lock_first_step", "lock_first_forward", "per_thread_lock",
                "separate_process")
MODEL_ONLY_WARMUP = "separate_process"
LIVE_WARMUP_MODES = tuple(m for m in WARMUP_MODES if m != MODEL_ONLY_WARMUP)
# `racelab live torch --attention` (kWorkloadAttentions): the workload's own setting, no model
# counterpart (every variant compiles as flex_compiled does; only the math differs).
WORKLOAD_ATTENTIONS = ("dense", "chunked", "fused")

# Every key of the pipeline model's tables: (racelab live torch's option, the Python pipelines'
# option, a note). "" where a side has none. The live torch column is kLiveTorchOptions (printed
# by `racelab live torch --help`).
SETTINGS = {
    "pipeline.devices": ("--gpus", "--gpus", "named for GPUs (live torch: --device is cpu|cuda)"),
    "pipeline.drafters_per_device": ("--drafters", "--drafters",
                                     "the total: devices x drafters_per_device"),
    "pipeline.steps": ("--steps", "--steps", "live torch: default 1, or --seq-lens L1,L2,..."),
    "pipeline.attention": ("", "--attention",
                           "the drafter pipelines are flex_compiled; train_queue_torch.py: "
                           "flex_compiled | sdpa_chunked"),
    "pipeline.seq_len": ("--seq-len", "--seq-len", "one length"),
    "pipeline.batch": ("", "", "1"),
    "pipeline.heads": ("--heads", "--heads", ""),
    "pipeline.head_dim": ("--head-dim", "--head-dim", "live torch also: --hidden = heads x head_dim"),
    "pipeline.chunk": ("--chunk", "--chunk", "train_queue_torch.py's sdpa_chunked"),
    "warmup.mode": ("--warmup", "--warmup", "all but separate_process"),
    "warmup.backward": ("--no-warmup-backward", "--no-warmup-backward", "backward = false"),
    "warmup.seq_len": ("--warmup-seq-len", "--warmup-seq-len", ""),
    "torch.profile": ("", "", "the torch it runs"),
    "torch.recompile_limit": ("", "--recompile-limit", "drafter_torch.py only"),
    "torch.automatic_dynamic": ("", "--no-automatic-dynamic",
                                "false: torch.compile(dynamic=False)"),
    "gpu.memory_gib": ("", "", "the device's own"),
}

# Old spellings, still accepted: (option, value) -> the arguments that replace it.
DEPRECATED = {
    ("--warmup", "sequential_forward"): ["--warmup", "sequential", "--no-warmup-backward"],
    ("--dynamic", "auto"): [],
    ("--dynamic", "false"): ["--no-automatic-dynamic"],
    ("--attention", "flex"): ["--attention", "flex_compiled"],   # train_queue_torch.py
    ("--attention", "chunked"): ["--attention", "sdpa_chunked"],  # train_queue_torch.py
}

# The drafter pipelines' defaults (pipeline.parser), which script_args() leaves out.
DEFAULTS = {"gpus": 1, "seq_len": 1024, "steps": 2, "warmup_seq_len": 0, "heads": 8,
            "head_dim": 64}

_warned = set()  # per process: a module outlives the executions racelab runs in it


def warn_deprecated(option, value, prog=None):
    """One line on stderr, once per process and spelling."""
    if (option, value) in _warned:
        return
    _warned.add((option, value))
    new = " ".join(DEPRECATED[(option, value)])
    print(f"{prog or 'racelab pipeline'}: warning: {option} {value} is deprecated; "
          + (f"use {new}" if new else "drop it (it is the default)"), file=sys.stderr, flush=True)


def _choices_text(names):
    return " | ".join(names)


class _Choice(argparse.Action):
    """An option with a fixed set of names and the deprecated spellings of DEPRECATED: an old one
    sets what its replacement sets and warns."""

    def __init__(self, option_strings, dest, names=(), **kw):
        self.names = tuple(names)
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, ns, value, option_string=None):
        option = self.option_strings[-1]
        if value in self.names:
            setattr(ns, self.dest, value)
            return
        if (option, value) in DEPRECATED:
            warn_deprecated(option, value, parser.prog)
            apply(parser, ns, DEPRECATED[(option, value)])
            return
        if value == MODEL_ONLY_WARMUP and option == "--warmup":
            parser.error(f"argument --warmup: {value} is the model's only: a live pipeline has "
                         "no on-disk compile cache for another process to warm (use racelab "
                         "explore)")
        if not self.names:
            old = [v for o, v in DEPRECATED if o == option]
            parser.error(f"argument {option}: invalid choice: {value!r} (a deprecated option: "
                         f"{' | '.join(old)})")
        parser.error(f"argument {option}: invalid choice: {value!r} (choose from "
                     f"{', '.join(self.names)})")


def apply(parser, ns, args):
    """Parses `args` (canonical spellings) into the existing namespace."""
    if args:
        parser.parse_known_args(args, ns)


def upgrade_args(args):
    """`args` with each deprecated spelling (`--opt old`, `--opt=old`) replaced as DEPRECATED says;
    no warning."""
    out, i = [], 0
    while i < len(args):
        option, eq, value = args[i].partition("=")
        if eq and (option, value) in DEPRECATED:
            out += DEPRECATED[(option, value)]
            i += 1
        elif i + 1 < len(args) and (args[i], args[i + 1]) in DEPRECATED:
            out += DEPRECATED[(args[i], args[i + 1])]
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


def add_warmup(parser, modes=LIVE_WARMUP_MODES, backward=True, seq_len=True):
    """--warmup MODE ([warmup] mode), and --no-warmup-backward ([warmup] backward = false) and
    --warmup-seq-len L ([warmup] seq_len) where the pipeline has them."""
    parser.add_argument("--warmup", default="none", action=_Choice, names=modes,
                        metavar="MODE", help=f"[warmup] mode: {_choices_text(modes)} "
                        "(default: none)")
    if backward:
        parser.add_argument("--no-warmup-backward", dest="warmup_backward",
                            action="store_false",
                            help="the sequential warmup runs the forward only ([warmup] "
                                 "backward = false)")
    if seq_len:
        parser.add_argument("--warmup-seq-len", type=int, default=0,
                            help="the sequential warmup's length ([warmup] seq_len; default: "
                                 "--seq-len)")


def add_attention(parser, names, default):
    """--attention NAME ([pipeline] attention), among `names` (of ATTENTIONS)."""
    assert set(names) <= set(ATTENTIONS), names
    parser.add_argument("--attention", default=default, action=_Choice, names=names,
                        metavar="NAME", help=f"[pipeline] attention: {_choices_text(names)} "
                        f"(default: {default})")


def add_automatic_dynamic(parser):
    """--no-automatic-dynamic ([torch] automatic_dynamic = false), and the deprecated
    --dynamic auto|false."""
    parser.add_argument("--no-automatic-dynamic", dest="automatic_dynamic",
                        action="store_false",
                        help="[torch] automatic_dynamic = false: torch.compile(dynamic=False), "
                             "every length compiles static with a lazy backward (default: a "
                             "second length recompiles dynamic, its backward ahead of time)")
    parser.add_argument("--dynamic", action=_Choice, names=(), dest="automatic_dynamic",
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def script_args(scenario, path="scenario"):
    """The drafter pipelines' arguments (pipeline.py's options: drafter_standin.py and
    drafter_torch.py take the same) for a pipeline scenario, as tomllib reads it. Keys with no
    counterpart there raise ValueError unless at the model's default; [explore], [expect] and
    [gpu] are the model's alone."""
    pipe = scenario.get("pipeline", {})
    warm = scenario.get("warmup", {})
    torch = scenario.get("torch", {})

    def refuse(key, why):
        raise ValueError(f"{path}: {key}: {why}")

    if "live" in scenario:
        refuse("live", "a live case runs its own script")
    attention = pipe.get("attention", "flex_compiled")
    if attention != "flex_compiled":
        refuse("pipeline.attention", f"{attention}: the drafter pipelines compile flex_attention "
               "(flex_compiled)")
    if pipe.get("batch", 1) != 1:
        refuse("pipeline.batch", "the drafter pipelines run batch 1")
    lengths = pipe.get("seq_len", 1024)
    lengths = lengths if isinstance(lengths, list) else [lengths]
    if len(set(lengths)) != 1:
        refuse("pipeline.seq_len", "the drafter pipelines train at one length")
    if torch.get("recompile_limit", 8) != 8:
        refuse("torch.recompile_limit", "the stand-in has no recompile limit")
    mode = warm.get("mode", "none")
    if mode not in LIVE_WARMUP_MODES:
        refuse("warmup.mode", f"{mode}: the live pipelines have no on-disk cache to warm")

    devices = pipe.get("devices", 1)
    values = {"gpus": devices, "seq_len": lengths[0], "steps": pipe.get("steps", 2),
              "warmup_seq_len": warm.get("seq_len", 0), "heads": pipe.get("heads", 8),
              "head_dim": pipe.get("head_dim", 64)}
    args = ["--drafters", str(devices * pipe.get("drafters_per_device", 2))]
    if values["gpus"] != DEFAULTS["gpus"]:
        args += ["--gpus", str(values["gpus"])]
    args += ["--warmup", mode]
    if mode == "sequential" and not warm.get("backward", True):
        args.append("--no-warmup-backward")
    for key, option in (("warmup_seq_len", "--warmup-seq-len"), ("seq_len", "--seq-len"),
                        ("steps", "--steps"), ("heads", "--heads"), ("head_dim", "--head-dim")):
        if values[key] != DEFAULTS[key]:
            args += [option, str(values[key])]
    if not torch.get("automatic_dynamic", True):
        args.append("--no-automatic-dynamic")
    return args

"""Measure the four re-training runs over several seeds and write the table behind the thresholds.

    python exercises/exercise4/calibrate.py --seeds 1337 1 2 3 4 --json /tmp/cal.json
    python exercises/exercise4/calibrate.py --render /tmp/cal.json
    python exercises/exercise4/calibrate.py --render /tmp/cal.json /tmp/perturbed.json   # the two compared

Each run goes through the grading's pipeline: the harness exports the model file's GPT (``export_gpt``:
ATen graphs in training and eval mode, and the initial tensors), and the clean process's functions
(``trainer.start_run``, ``train_steps``, ``checkpoint``) train and evaluate the *graphs* with the grader's
loop, a validation checkpoint every 100 steps as a grading takes them; the final score is the judge's
(the reference GPT on the trained weights). The gradient profiles are ``trainer.grad_flow`` on the
exported training graphs. Here the harness and the trainer are imported in this one process (a grading
keeps them in two sandboxes; the numbers are the same: one torch thread, the same calls).

The model file is by default the reference solution; ``--model`` points it at another ``model.py`` (e.g. a
corpus case) to see what the checks would say. ``--eager`` also runs the model file's own ``run()`` (what
``python model.py`` prints) next to each graph run. One process, one torch thread (``--threads`` to measure
the effect of more), runs one after the other: the machine is shared. Results are appended to the JSON file
as they come, so an interrupted calibration keeps what it measured; rerunning skips what is already there.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _modules(model_file: Path, threads: int):
    """Import the harness against ``model_file`` (as the sandbox does: ``import model`` finds the student's)
    and the clean process's ``trainer`` (which imports ``aten_graph`` from this folder)."""
    sys.path[:0] = [str(model_file.parent), str(HERE)]
    import torch

    harness = importlib.import_module("harness")
    trainer = importlib.import_module("trainer")
    torch.set_num_threads(threads)  # both pin 1 thread on import; --threads overrides it here
    return harness, trainer


class _Noise:
    """The perturbation of the initial weights now in force (``--perturb``): its size and its generator's seed."""
    eps = 0.0
    seed = 99


def _perturb(harness) -> None:
    """Wrap the harness's model builder so every initial weight gets a relative perturbation of size
    ``_Noise.eps``, drawn from a generator seeded ``_Noise.seed`` (the exported tensors carry it)."""
    import torch

    build = harness._gpt

    def perturbed(config, seed):
        net = build(config, seed)
        noise = torch.Generator().manual_seed(_Noise.seed)
        with torch.no_grad():
            for p in net.parameters():
                p.mul_(1 + _Noise.eps * torch.randn(p.shape, generator=noise))
        return net

    harness._gpt = perturbed


def _torch_init(harness) -> None:
    """Wrap the harness's model builder so the model gets torch's default initialisation (seeded)."""
    import torch

    build = harness._gpt

    def default_init(config, seed):
        net = build(config, seed)
        torch.manual_seed(int(seed))
        for module in net.modules():
            if module is not net and hasattr(module, "reset_parameters"):
                module.reset_parameters()
        return net

    harness._gpt = default_init


class Exports:
    """The model file's GPT exported per (mode, seed), as a grading exports it (made once, timed)."""

    def __init__(self, harness, settings, batch_size: int):
        self.harness, self.settings, self.batch_size = harness, settings, batch_size
        self.made: dict = {}
        self.seconds: dict = {}

    def get(self, mode: str, seed: int) -> dict:
        key = (mode, seed, _Noise.seed)
        if key not in self.made:
            started = time.perf_counter()
            self.made[key] = self.harness.export_gpt(self.settings.model_config(*self.settings.MODES[mode]), seed,
                                                     self.batch_size)
            self.seconds[key] = time.perf_counter() - started
        return self.made[key]


def _grad_stats(exports: Exports, trainer, settings, seed: int) -> tuple[dict, dict]:
    """The gradient-flow check's measurement on the exported training graphs (``trainer.grad_flow``), and the
    norm of each block's *parameter* gradient for the same loss (what the check does not use; CALIBRATION.md)."""
    import numpy as np

    train, _, _ = settings.corpus()
    rng = np.random.default_rng(settings.GRAD_SEED)
    n_ctx, n_layer = settings.MODEL["n_ctx"], settings.MODEL["n_layer"]
    starts = rng.integers(0, len(train) - n_ctx - 1, settings.GRAD_BATCH)
    x = np.stack([train[s:s + n_ctx] for s in starts]).astype(np.int64)
    y = np.stack([train[s + 1:s + 1 + n_ctx] for s in starts]).astype(np.int64)
    out, params = {}, {}
    for mode in ("prenorm", "no-residual", "postnorm"):
        ex = exports.get(mode, seed)
        out[mode] = trainer.grad_flow(ex["train"], ex["state"], x, y, n_layer)["blocks"]
        # d loss / d logits of loss = mean_b CE(logits[b, -1], y[b, -1]): (softmax - one-hot) / B at the last position.
        logits = trainer.forward(ex["train"], ex["state"], x, "float32")["out"].astype(np.float64)
        last = logits[:, -1] - logits[:, -1].max(axis=-1, keepdims=True)
        p = np.exp(last) / np.exp(last).sum(axis=-1, keepdims=True)
        p[np.arange(len(y)), y[:, -1]] -= 1.0
        cotangent = np.zeros_like(logits, dtype=np.float32)
        cotangent[:, -1] = p / len(y)
        grads = trainer.forward(ex["train"], ex["state"], x, "float32", cotangent)["grads"]
        params[mode] = [math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for t, g in grads.items()
                                      if t.startswith(f"h.{i}."))) for i in range(n_layer)]
    return out, params


def _run(exports: Exports, trainer, settings, reference, name: str, lr: float, seed: int, steps: int,
         every: int) -> dict:
    """One re-training run as a grading makes it: export, start_run (val_start), train_steps with a
    checkpoint every ``every`` steps, the final checkpoint's weights scored by the judge's reference GPT."""
    residual, prenorm, _ = settings.RUNS[name]
    config = settings.model_config(residual, prenorm)
    ex = exports.get(settings.RUN_MODES[name], seed)
    train, val, _ = settings.corpus()
    load = os.getloadavg()[0]
    cpu, wall = time.process_time(), time.perf_counter()
    start = trainer.start_run(name, ex["train"], ex["eval"], ex["state"], train, val, settings.eval_starts(len(val)),
                              lr=lr, seed=seed, batch_size=exports.batch_size,
                              weight_decay=settings.TRAIN["weight_decay"], n_ctx=settings.MODEL["n_ctx"])
    checkpoints = [[0, start["val_loss"]]]
    curve, out = [], {"diverged": False, "seconds": 0.0}
    try:
        while len(curve) < steps and not out["diverged"]:
            out = trainer.train_steps(name, min(every, steps - len(curve)))
            curve += out["curve"]
            if len(curve) < steps and not out["diverged"]:
                checkpoints.append([len(curve), trainer.checkpoint(name)["val_loss"]])
        final = trainer.checkpoint(name, True)
    finally:
        trainer.end_run(name)
    train_cpu, train_wall = time.process_time() - cpu, time.perf_counter() - wall
    diverged = bool(out["diverged"]) or not math.isfinite(final["val_loss"])
    graph_val = float("nan") if diverged else final["val_loss"]
    checkpoints.append([len(curve), graph_val])
    val_loss = float("nan")
    if not diverged:  # scored as the grader scores: the judge's reference GPT on the trained weights
        state = dict(final["weights"])
        state.setdefault("lm_head.weight", state.get("wte.weight"))
        val_loss = reference.val_loss(reference.load_student_gpt(config, state), val, settings.eval_starts(len(val)),
                                      settings.MODEL["n_ctx"])
    return {"val_start": start["val_loss"], "val_loss": val_loss, "graph_val_loss": graph_val,
            "checkpoints": checkpoints, "seconds": round(out["seconds"], 2), "wall_seconds": round(train_wall, 2),
            "cpu_seconds": round(train_cpu, 2), "eval_cpu_seconds": round(time.process_time() - cpu - train_cpu, 2),
            "export_seconds": round(exports.seconds.get((settings.RUN_MODES[name], seed, _Noise.seed), 0.0), 2),
            "load": round(load, 2), "final_train": curve[-1] if curve else None, "diverged": diverged,
            "lr": lr, "steps": len(curve)}


def _eager(model, settings, name: str, lr: float, seed: int, steps: int) -> dict:
    """The model file's own ``run()`` (what its ``python model.py`` prints), in this process."""
    residual, prenorm, _ = settings.RUNS[name]
    train, val, chars = settings.corpus()
    cpu, wall = time.process_time(), time.perf_counter()
    val_loss, curve = model.run(residual, prenorm, lr, train, val, len(chars), steps=steps, seed=seed)
    return {"eager_val_loss": float(val_loss), "eager_final_train": curve[-1] if curve else None,
            "eager_seconds": round(time.perf_counter() - wall, 2),
            "eager_cpu_seconds": round(time.process_time() - cpu, 2)}


def _cpu() -> str:
    """The CPU's model name (the last bits of a chaotic run depend on it), as /proc/cpuinfo gives it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _save(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def measure(args) -> None:
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import reference, settings
    from exercises.exercise4.tests.checks import CHECKPOINT_EVERY

    harness, trainer = _modules(Path(args.model).resolve(), args.threads)
    if args.perturb:
        _Noise.eps = args.perturb
        _perturb(harness)
    if args.torch_init:
        _torch_init(harness)
    steps = settings.TRAIN["steps"] if args.steps is None else args.steps
    batch = settings.TRAIN["batch_size"] if args.batch_size is None else args.batch_size
    lr_low = settings.LR_LOW if args.lr_low is None else args.lr_low
    lr_high = settings.LR_HIGH if args.lr_high is None else args.lr_high
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.is_file() else {}
    data.setdefault("meta", {
        "model": str(Path(args.model).resolve().relative_to(ROOT)) if Path(args.model).resolve().is_relative_to(ROOT)
        else str(args.model), "pipeline": "harness.export_gpt -> trainer (graphs), judge's reference GPT scores",
        "threads": args.threads, "steps": steps,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "cpu": _cpu(),
        "torch": importlib.import_module("torch").__version__, "batch_size": batch, "perturb": args.perturb,
        "init": "torch defaults" if args.torch_init else "skeleton (GPT-2)", "lr_low": lr_low, "lr_high": lr_high,
        "checkpoint_every": CHECKPOINT_EVERY,
        "unigram_loss": settings.unigram_loss(), "unigram_entropy": settings.unigram_entropy(),
    })
    runs = data.setdefault("runs", {})
    exports = Exports(harness, settings, batch)
    lrs = {settings.LR_LOW: lr_low, settings.LR_HIGH: lr_high}
    for seed in args.seeds:
        for noise in (args.perturb_seeds if args.perturb else [None]):
            if noise is not None:
                _Noise.seed = noise
            key = str(seed) if noise is None else f"{seed} noise {noise}"
            entry = runs.setdefault(key, {})
            if "grad" not in entry or "grad_params" not in entry:
                entry["grad"], entry["grad_params"] = _grad_stats(exports, trainer, settings, seed)
                _save(path, data)
            for name in args.runs:
                if name in entry and (not args.eager or "eager_val_loss" in entry[name]):
                    continue
                lr = lrs[settings.RUNS[name][2]]
                if name not in entry:
                    entry[name] = _run(exports, trainer, settings, reference, name, lr, seed, steps, CHECKPOINT_EVERY)
                if args.eager:
                    entry[name].update(_eager(harness.model, settings, name, lr, seed, steps))
                e = entry[name]
                print(f"{key} {name:17} start {e['val_start']:.4f} val {e['val_loss']:.4f}  {e['seconds']:.1f} s "
                      f"(cpu {e['cpu_seconds']:.1f} s, load {e['load']:.1f})"
                      + (f"  eager {e['eager_val_loss']:.4f}" if "eager_val_loss" in e else ""), flush=True)
                _save(path, data)
    _save(path, data)


def _fmt(v, digits: int = 3) -> str:
    return "" if v is None else ("NaN" if isinstance(v, float) and math.isnan(v) else f"{v:.{digits}f}")


def render(path: Path) -> str:
    """The markdown tables of a calibration JSON: val loss per seed and run, margins to each threshold,
    where each run started and how far it moved, the gradient profiles, the eager runs if measured."""
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import settings

    data = json.loads(Path(path).read_text())
    meta = data["meta"]
    U = meta["unigram_loss"]
    names = list(settings.RUNS)
    lines = [f"U (train-unigram loss on the validation windows) = {U:.4f} nats; "
             f"{meta['steps']} steps, batch {meta.get('batch_size')}, lr {meta.get('lr_low')} / "
             f"{meta.get('lr_high')}, {meta['threads']} thread(s), {meta['machine']}, "
             f"{meta.get('cpu', 'CPU not recorded')}, torch {meta.get('torch', '?')}"
             + (f", initial weights perturbed by {meta['perturb']:g}" if meta.get("perturb") else "") + ".", "",
             "| seed | " + " | ".join(names) + " | high-lr gap (post - pre) | grad ratio block 0 (res / no-res) |",
             "|---|" + "---|" * (len(names) + 2)]
    cols: dict[str, list[float]] = {n: [] for n in names + ["gap", "ratio", "flat", "vanish", "start", "moved"]}
    for seed, entry in data["runs"].items():
        cells = []
        for n in names:
            v = entry.get(n, {}).get("val_loss")
            cells.append(_fmt(v))
            if v is not None:
                cols[n].append(v)
        gap = ""
        if "prenorm-high-lr" in entry and "postnorm-high-lr" in entry:
            g = entry["postnorm-high-lr"]["val_loss"] - entry["prenorm-high-lr"]["val_loss"]
            cols["gap"].append(g)
            gap = f"{g:.3f}"
        grad = entry.get("grad", {})
        ratio = ""
        if grad:
            r = grad["prenorm"][0] / max(grad["no-residual"][0], 1e-30)
            cols["ratio"].append(r)
            cols["flat"].append(grad["prenorm"][0] / grad["prenorm"][-1])
            cols["vanish"].append(grad["no-residual"][0] / grad["no-residual"][-1])
            ratio = f"{r:.3g}"
        lines.append(f"| {seed} | " + " | ".join(cells) + f" | {gap} | {ratio} |")
        for n in names:
            if n in entry and "val_start" in entry[n]:
                cols["start"].append(entry[n]["val_start"] - U)
                if not entry[n]["diverged"]:
                    cols["moved"].append(entry[n]["val_start"] - entry[n]["val_loss"])
    lines.append("")
    checks = [
        ("prenorm <= U - PRENORM_BELOW", "prenorm", max, U - settings.PRENORM_BELOW, "<="),
        ("no-residual >= U - STUCK_WITHIN", "no-residual", min, U - settings.STUCK_WITHIN, ">="),
        ("prenorm-high-lr <= U - HIGH_LR_PRENORM_BELOW", "prenorm-high-lr", max,
         U - settings.HIGH_LR_PRENORM_BELOW, "<="),
        ("postnorm-high-lr >= U - STUCK_WITHIN", "postnorm-high-lr", min, U - settings.STUCK_WITHIN, ">="),
        ("gap >= HIGH_LR_GAP", "gap", min, settings.HIGH_LR_GAP, ">="),
        ("val_start - U >= START_ABOVE", "start", min, settings.START_ABOVE, ">="),
        ("val_start - val_loss >= MOVED_MIN", "moved", min, settings.MOVED_MIN, ">="),
        ("grad ratio >= GRAD_RATIO_MIN", "ratio", min, settings.GRAD_RATIO_MIN, "x>="),
        ("pre-norm first / last block >= GRAD_FLAT_MIN", "flat", min, settings.GRAD_FLAT_MIN, "x>="),
        ("no-residual first / last block <= GRAD_VANISH_MAX", "vanish", max, settings.GRAD_VANISH_MAX, "x<="),
    ]
    lines += ["| threshold | limit | worst seed | margin |", "|---|---|---|---|"]
    for label, col, worst, limit, op in checks:
        values = [v for v in cols[col] if not math.isnan(v)]
        if not values:
            continue
        w = worst(values)
        if op.startswith("x"):  # ratios: the margin is a factor
            factor = w / limit if op == "x>=" else limit / w
            lines.append(f"| {label} | {limit:.3g} | {w:.3g} | x{factor:.3g} |")
            continue
        margin = (limit - w) if op == "<=" else (w - limit)
        lines.append(f"| {label} | {limit:.3f} | {w:.3f} | {margin:+.3f} |")
    lines += ["", "Where each run started and how far it moved (validation loss at steps 0, 100, 200, 300 and the "
              "end, in the clean process; moved = start - the judge's final score):", "",
              "| seed | run | lr | start (U + ...) | checkpoints | moved |", "|---|---|---|---|---|---|"]
    for seed, entry in data["runs"].items():
        for n in names:
            e = entry.get(n)
            if not e or "val_start" not in e:
                continue
            points = " · ".join(_fmt(v) for _, v in e.get("checkpoints", []))
            lines.append(f"| {seed} | {n} | {e.get('lr', '')} | {e['val_start']:.3f} (U + {e['val_start'] - U:.3f}) "
                         f"| {points} | {_fmt(e['val_start'] - e['val_loss'])} |")
    eager = [(seed, n, e) for seed, entry in data["runs"].items() for n in names
             if (e := entry.get(n)) and "eager_val_loss" in e]
    if eager:
        lines += ["", "The model file's own `run()` (eager, what `python model.py` prints) against the graph re-run "
                  "(the judge's score of the trained graph's weights):", "",
                  "| seed | run | eager | graph re-run | difference | final training loss, eager / graph |",
                  "|---|---|---|---|---|---|"]
        for seed, n, e in eager:
            lines.append(f"| {seed} | {n} | {e['eager_val_loss']:.4f} | {e['val_loss']:.4f} | "
                         f"{abs(e['eager_val_loss'] - e['val_loss']):.1e} | {_fmt(e.get('eager_final_train'), 4)} / "
                         f"{_fmt(e.get('final_train'), 4)} |")
    lines += ["", "Gradient reaching each block at initialisation (|d loss_last / d block input| at the last position, "
              "blocks 0..5 from the input), per seed:", "",
              "| seed | mode | " + " | ".join(f"block {i}" for i in range(settings.MODEL["n_layer"])) + " | first / last |",
              "|---|---|" + "---|" * (settings.MODEL["n_layer"] + 1)]
    for seed, entry in data["runs"].items():
        for mode, profile in entry.get("grad", {}).items():
            lines.append(f"| {seed} | {mode} | " + " | ".join(f"{v:.2g}" for v in profile)
                         + f" | {profile[0] / profile[-1]:.2g} |")
    runs = [e[n] for e in data["runs"].values() for n in names if n in e]
    if runs:
        secs, cpus = [r["seconds"] for r in runs], [r["cpu_seconds"] for r in runs]
        loads = [r["load"] for r in runs]
        lines += ["", f"One run: {min(secs):.1f}-{max(secs):.1f} s of training (train_steps), "
                      f"{min(cpus):.1f}-{max(cpus):.1f} s CPU with its checkpoints, at load averages "
                      f"{min(loads):.1f}-{max(loads):.1f}."]
        exp = sorted({r["export_seconds"] for r in runs if r.get("export_seconds")})
        if exp:
            lines[-1] += f" One export (train and eval graph): {exp[0]:.1f}-{exp[-1]:.1f} s."
    return "\n".join(lines)


def compare(base: Path, other: Path) -> str:
    """The runs both JSON files hold (same seed), side by side: how far ``other`` moved each final loss."""
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import settings

    a, b = json.loads(Path(base).read_text()), json.loads(Path(other).read_text())
    lines = [f"{Path(other).name} against {Path(base).name}:", "",
             "| seed | run | " + f"{Path(base).stem} | {Path(other).stem} | difference |", "|---|---|---|---|---|"]
    diffs: dict[str, list[float]] = {}
    for key, entry in b["runs"].items():
        seed = key.split()[0]
        for n in settings.RUNS:
            if n in entry and n in a["runs"].get(seed, {}):
                x, y = a["runs"][seed][n]["val_loss"], entry[n]["val_loss"]
                diffs.setdefault(n, []).append(abs(y - x))
                lines.append(f"| {key} | {n} | {x:.4f} | {y:.4f} | {y - x:+.4f} |")
    lines += ["", "| run | samples | largest difference |", "|---|---|---|"]
    lines += [f"| {n} | {len(d)} | {max(d):.2g} |" for n, d in diffs.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[1337, 1, 2, 3, 4])
    parser.add_argument("--runs", nargs="*", default=None,
                        help="Run names (default: all four; give --runs with no name for the gradient profiles only).")
    parser.add_argument("--model", default=str(ROOT / "solutions" / "exercise4" / "model.py"))
    parser.add_argument("--steps", type=int, default=None, help="Override the number of steps (exploration only).")
    parser.add_argument("--lr-low", type=float, default=None,
                        help="Override LR_LOW (exploration; --lr-low 0 --lr-high 0: an untrained model).")
    parser.add_argument("--lr-high", type=float, default=None, help="Override LR_HIGH (exploration only).")
    parser.add_argument("--batch-size", type=int, default=None, help="Override the batch size (exploration only).")
    parser.add_argument("--perturb", type=float, default=0.0,
                        help="Multiply every initial weight by (1 + EPS * N(0, 1)): how far do last-bit differences "
                             "(another machine, another BLAS) move the final loss? (report tolerance)")
    parser.add_argument("--perturb-seeds", type=int, nargs="+", default=[99],
                        help="Seeds of the perturbation's noise (one set of runs each, keyed 'SEED noise N').")
    parser.add_argument("--torch-init", action="store_true",
                        help="Re-initialise every module with torch's defaults (reset_parameters) instead of the "
                             "skeleton's GPT-2 init: do the results depend on the init?")
    parser.add_argument("--eager", action="store_true",
                        help="Also run the model file's own run() (python model.py) and record its val loss.")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default="calibration.json", help="Where results are kept (appended).")
    parser.add_argument("--render", nargs="+", default=None,
                        help="Print the markdown tables of this JSON and exit; with a second JSON, compare the two.")
    args = parser.parse_args(argv)
    if args.render:
        print(render(Path(args.render[0])) if len(args.render) == 1 else compare(*map(Path, args.render[:2])))
        return 0
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import settings

    args.runs = list(settings.RUNS) if args.runs is None else args.runs
    measure(args)
    print(render(Path(args.json)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

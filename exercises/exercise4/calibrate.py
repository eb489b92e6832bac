"""Measure the four re-training runs over several seeds and write the table behind the thresholds.

    python exercises/exercise4/calibrate.py --seeds 1337 1 2 3 4 --json /tmp/cal.json
    python exercises/exercise4/calibrate.py --render /tmp/cal.json > exercises/exercise4/CALIBRATION-table.md

Each run is the harness's ``train_run`` (the grader's own loop) on a model file, by default the reference
solution; ``--model`` points it at another ``model.py`` (e.g. a corpus case) to see what the checks would
say. One process, one torch thread (``--threads`` to measure the effect of more), runs one after the other:
the machine is shared. Results are appended to the JSON file as they come, so an interrupted
calibration keeps what it measured; rerunning skips what is already there.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _harness(model_file: Path, threads: int):
    """Import the harness against ``model_file`` (as the sandbox does: ``import model`` finds the student's)."""
    sys.path[:0] = [str(model_file.parent), str(HERE)]
    import torch

    harness = importlib.import_module("harness")
    torch.set_num_threads(threads)  # the harness pins 1 thread on import; --threads overrides it here
    return harness


def _perturb(harness, eps: float) -> None:
    """Wrap the harness's model builder so every initial weight gets a relative perturbation of size ``eps``."""
    import torch

    build = harness._gpt

    def perturbed(config, seed):
        net = build(config, seed)
        noise = torch.Generator().manual_seed(99)
        with torch.no_grad():
            for p in net.parameters():
                p.mul_(1 + eps * torch.randn(p.shape, generator=noise))
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


def _grad_stats(harness, settings, seed: int) -> dict:
    import numpy as np

    train, _, _ = settings.corpus()
    rng = np.random.default_rng(settings.GRAD_SEED)
    n_ctx = settings.MODEL["n_ctx"]
    starts = rng.integers(0, len(train) - n_ctx - 1, settings.GRAD_BATCH)
    x = np.stack([train[s:s + n_ctx] for s in starts])
    y = np.stack([train[s + 1:s + 1 + n_ctx] for s in starts])
    out, params = {}, {}
    for name, (residual, prenorm) in {"prenorm": (True, True), "no-residual": (False, True),
                                      "postnorm": (True, False)}.items():
        flow = harness.grad_flow(settings.model_config(residual, prenorm), seed, x, y)
        out[name], params[name] = flow["blocks"], flow["params"]
    return out, params


def measure(args) -> None:
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import reference, settings

    harness = _harness(Path(args.model).resolve(), args.threads)
    if args.perturb:
        _perturb(harness, args.perturb)
    if args.torch_init:
        _torch_init(harness)
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.is_file() else {}
    data.setdefault("meta", {
        "model": str(args.model), "threads": args.threads, "steps": args.steps or settings.TRAIN["steps"],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "batch_size": args.batch_size or settings.TRAIN["batch_size"], "perturb": args.perturb,
        "init": "torch defaults" if args.torch_init else "skeleton (GPT-2)",
        "lr_low": args.lr_low or settings.LR_LOW, "lr_high": args.lr_high or settings.LR_HIGH,
        "unigram_loss": settings.unigram_loss(), "unigram_entropy": settings.unigram_entropy(),
    })
    runs = data.setdefault("runs", {})
    train, val, _ = settings.corpus()
    kwargs = dict(settings.TRAIN, steps=args.steps or settings.TRAIN["steps"],
                  batch_size=args.batch_size or settings.TRAIN["batch_size"])
    lrs = {settings.LR_LOW: args.lr_low or settings.LR_LOW, settings.LR_HIGH: args.lr_high or settings.LR_HIGH}
    for seed in args.seeds:
        key = str(seed)
        entry = runs.setdefault(key, {})
        if "grad" not in entry or "grad_params" not in entry:
            # grad_params: the norm of each block's parameter gradient (what is *not* used; CALIBRATION.md)
            entry["grad"], entry["grad_params"] = _grad_stats(harness, settings, seed)
        for name in args.runs:
            if name in entry:
                continue
            residual, prenorm, lr = settings.RUNS[name]
            lr = lrs[lr]
            load = os.getloadavg()[0]
            cpu = time.process_time()
            config = settings.model_config(residual, prenorm)
            r = harness.train_run(config, train, settings.probe_ids(), lr=lr, seed=seed, **kwargs)
            train_cpu = time.process_time() - cpu
            # Scored as the grader scores: the judge's reference GPT on the returned weights.
            val_loss = float("nan") if r["diverged"] else reference.val_loss(
                reference.load_student_gpt(config, r["state"]), val, settings.eval_starts(len(val)),
                settings.MODEL["n_ctx"])
            entry[name] = {"val_loss": val_loss, "seconds": round(r["seconds"], 2),
                           "cpu_seconds": round(train_cpu, 2), "eval_cpu_seconds": round(time.process_time() - cpu
                                                                                         - train_cpu, 2),
                           "load": round(load, 2), "final_train": r["curve"][-1], "diverged": r["diverged"]}
            print(f"seed {seed} {name:17} val {val_loss:.4f}  {r['seconds']:.1f} s "
                  f"(cpu {entry[name]['cpu_seconds']:.1f} s, load {load:.1f})", flush=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1))
            tmp.replace(path)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def render(path: Path) -> str:
    """The markdown table of a calibration JSON: val loss per seed and run, margins to each threshold."""
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import settings

    data = json.loads(Path(path).read_text())
    U = data["meta"]["unigram_loss"]
    names = list(settings.RUNS)
    lines = [f"U (train-unigram loss on the validation windows) = {U:.4f} nats; "
             f"{data['meta']['steps']} steps, batch {data['meta'].get('batch_size')}, lr {data['meta'].get('lr_low')} / "
             f"{data['meta'].get('lr_high')}, {data['meta']['threads']} thread(s), {data['meta']['machine']}.", "",
             "| seed | " + " | ".join(names) + " | high-lr gap (post - pre) | grad ratio block 0 (res / no-res) |",
             "|---|" + "---|" * (len(names) + 2)]
    cols: dict[str, list[float]] = {n: [] for n in names + ["gap", "ratio", "flat", "vanish"]}
    for seed, entry in data["runs"].items():
        cells = []
        for n in names:
            v = entry.get(n, {}).get("val_loss")
            cells.append("" if v is None else f"{v:.3f}")
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
            ratio = f"{r:.0f}"
        lines.append(f"| {seed} | " + " | ".join(cells) + f" | {gap} | {ratio} |")
    lines.append("")
    checks = [
        ("prenorm <= U - PRENORM_BELOW", "prenorm", max, U - settings.PRENORM_BELOW, "<="),
        ("no-residual >= U - STUCK_WITHIN", "no-residual", min, U - settings.STUCK_WITHIN, ">="),
        ("prenorm-high-lr <= U - HIGH_LR_PRENORM_BELOW", "prenorm-high-lr", max,
         U - settings.HIGH_LR_PRENORM_BELOW, "<="),
        ("postnorm-high-lr >= U - STUCK_WITHIN", "postnorm-high-lr", min, U - settings.STUCK_WITHIN, ">="),
        ("gap >= HIGH_LR_GAP", "gap", min, settings.HIGH_LR_GAP, ">="),
        ("grad ratio >= GRAD_RATIO_MIN", "ratio", min, settings.GRAD_RATIO_MIN, "x>="),
        ("pre-norm first / last block >= GRAD_FLAT_MIN", "flat", min, settings.GRAD_FLAT_MIN, "x>="),
        ("no-residual first / last block <= GRAD_VANISH_MAX", "vanish", max, settings.GRAD_VANISH_MAX, "x<="),
    ]
    lines += ["| threshold | limit | worst seed | margin |", "|---|---|---|---|"]
    for label, col, worst, limit, op in checks:
        if not cols[col]:
            continue
        w = worst(cols[col])
        if op.startswith("x"):  # ratios: the margin is a factor
            factor = w / limit if op == "x>=" else limit / w
            lines.append(f"| {label} | {limit:.3g} | {w:.3g} | x{factor:.3g} |")
            continue
        margin = (limit - w) if op == "<=" else (w - limit)
        lines.append(f"| {label} | {limit:.3f} | {w:.3f} | {margin:+.3f} |")
    lines += ["", "Gradient reaching each block at initialisation (|d loss_last / d block input| at the last position, "
              "blocks 0..5 from the input), per seed:", "",
              "| seed | mode | " + " | ".join(f"block {i}" for i in range(settings.MODEL["n_layer"])) + " | first / last |",
              "|---|---|" + "---|" * (settings.MODEL["n_layer"] + 1)]
    for seed, entry in data["runs"].items():
        for mode, profile in entry.get("grad", {}).items():
            lines.append(f"| {seed} | {mode} | " + " | ".join(f"{v:.2g}" for v in profile)
                         + f" | {profile[0] / profile[-1]:.2g} |")
    secs = [e[n]["seconds"] for e in data["runs"].values() for n in names if n in e]
    cpus = [e[n]["cpu_seconds"] for e in data["runs"].values() for n in names if n in e]
    if secs:
        lines += ["", f"One run: {min(secs):.1f}-{max(secs):.1f} s wall, {min(cpus):.1f}-{max(cpus):.1f} s CPU."]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[1337, 1, 2, 3, 4])
    parser.add_argument("--runs", nargs="*", default=None,
                        help="Run names (default: all four; give --runs with no name for the gradient profiles only).")
    parser.add_argument("--model", default=str(ROOT / "solutions" / "exercise4" / "model.py"))
    parser.add_argument("--steps", type=int, default=None, help="Override the number of steps (exploration only).")
    parser.add_argument("--lr-low", type=float, default=None, help="Override LR_LOW (exploration only).")
    parser.add_argument("--lr-high", type=float, default=None, help="Override LR_HIGH (exploration only).")
    parser.add_argument("--batch-size", type=int, default=None, help="Override the batch size (exploration only).")
    parser.add_argument("--perturb", type=float, default=0.0,
                        help="Multiply every initial weight by (1 + EPS * N(0, 1)): how far do last-bit differences "
                             "(another machine, another BLAS) move the final loss? (report tolerance)")
    parser.add_argument("--torch-init", action="store_true",
                        help="Re-initialise every module with torch's defaults (reset_parameters) instead of the "
                             "skeleton's GPT-2 init: do the results depend on the init?")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default="calibration.json", help="Where results are kept (appended).")
    parser.add_argument("--render", default=None, help="Print the markdown table of this JSON and exit.")
    args = parser.parse_args(argv)
    if args.render:
        print(render(Path(args.render)))
        return 0
    sys.path.insert(0, str(ROOT))
    from exercises.exercise4.tests import settings

    args.runs = list(settings.RUNS) if args.runs is None else args.runs
    measure(args)
    print(render(Path(args.json)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

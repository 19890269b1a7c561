#!/usr/bin/env python3
"""Side-by-side benchmark of heed against the PyTorch reference (torch_nmt.py); run by
scripts/bench.sh, which installs the packages and builds heed in Release first.

What it does, in order (every run prints the load average before it starts):

1. Data. The first --train-lines pairs of CORPUS/train.{src,tgt} and of CORPUS/dev.* (all, or
   the first --dev-lines).
   heed's own tokenizer (vocabulary --vocab-size, joint) is learned once from that slice and
   encodes it; pairs with an empty side or more than --max-len - 1 pieces on a side are left
   out here, so that both systems keep every remaining pair (heed's data.max_length counts
   </s>, the reference's --max-len does not). The reference gets the pieces as
   whitespace-separated text; heed trains on the raw text with the same tokenizer.json
   (tokenizer.path). Checked, not assumed: the pieces map one to one onto the ids of
   `heed tokenizer encode --ids`, and the encoded corpus heed's trainer writes to its cache is
   exactly those ids.
2. Roofline: `heed bench ops` on matmul shapes of these models; the roofline is the best
   median rate of the bare oneDNN primitive.
3. Training speed, per architecture, --pairs times heed then the reference (A B A B ...):
   the same model sizes, optimiser settings, dropout 0.1, seed, threads, and batches of at
   most --batch-tokens target labels incl. </s> (heed: training.batch_unit = "target").
   Throughput = target labels (non-pad, incl. </s>) / seconds over updates
   warmup+1 .. warmup+steps. The reference reports it itself (`tgt_tok_per_s`: the sum of its
   update times). heed logs every `warmup` updates to metrics.jsonl the target tokens/s of
   the window since the previous record and the elapsed time; the figure here is
   Σ tokens_per_s_i * Δelapsed_i / Σ Δelapsed_i over the windows after the warm-up, i.e.
   wall time of the whole loop (batch assembly and logging included, which the reference's
   figure leaves out). Peak memory: the maximum resident set size of each process (wait4).
   Achieved GFLOP/s = heed tokens/s * matmul FLOPs per target token, counted analytically
   over the training slice (forward + backward = 3 * forward; padding not counted).
4. Equal-time quality: each system trains once for --quality-minutes (heed: training.max_time,
   the reference: --minutes), then translates the dev set (greedy and beam 5, --pairs times,
   alternating), scored by `heed bleu` (the reference's pieces decoded back to text with heed's
   tokenizer). Same search: batches of 32 sentences, at most ceil(2 * n) tokens before </s>,
   score / length^alpha (length incl. </s>; alpha 1.0 for the GRU, 0.6 for the Transformer).
   Translation speed: the reference's own figure (encoding + search, model loading excluded);
   heed's from its final `translate:` log line (tokenizing, search and detokenizing; model
   loading excluded). Output tokens exclude </s> in both.
5. Translation speed with one model: the models of step 4 differ (their outputs differ in
   length, so the systems do different amounts of search). heed's model is also converted into
   a reference checkpoint (same parameter names; the reference's vocabulary = heed's pieces in
   id order, so the ids agree) and both translate the dev set with it, alternating: the same
   search over the same model, so equal outputs are expected and counted, and the ratio
   compares speed alone.
6. int8, with heed's model of step 4 (or, in the int8 phase, with trained models given by
   --int8-models, each translating the dev set with its own tokenizer): heed fp32, heed's int8
   copy (heed quantize), the reference fp32 and the reference under PyTorch's dynamic int8
   quantization (scripts/bench-peer-int8.py: quantize_dynamic over nn.Linear, nn.GRU and
   nn.GRUCell), alternating, greedy and beam 5; sentences/s, the ratios heed int8 / reference
   int8 and int8 / fp32 of each, and dev BLEU of all four. Without VNNI heed's int8 products use
   7-bit weights (README); the table says when the CPU lacks it.

Prints a table and writes everything as JSON (--json). Standard library only.
"""
import argparse
import datetime
import glob
import json
import math
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

ARCHS = {
    # sizes and optimiser settings of the reference's defaults (torch_nmt.py train -h)
    "gru": {
        "heed_arch": "gru-bahdanau",
        "sizes": {"emb_dim": 256, "enc_hidden": 512, "dec_hidden": 512, "attn_dim": 512, "readout_dim": 256},
        "lr": 1e-3, "beta2": 0.999, "eps": 1e-8, "schedule": "constant", "warmup": 0, "alpha": 1.0,
        "train_target": 3.0,
    },
    "transformer": {
        "heed_arch": "transformer",
        "sizes": {"d_model": 256, "heads": 4, "ffn_dim": 1024, "enc_layers": 3, "dec_layers": 3},
        "lr": 5e-4, "beta2": 0.98, "eps": 1e-9, "schedule": "inverse-sqrt", "warmup": 4000, "alpha": 0.6,
        "train_target": 2.0,
    },
}
TRANSLATE_TARGET = 3.0
ROOFLINE_CAP = 0.70          # a ratio target needing more than this share of the roofline is capped
TRANSFORMER_ROOFLINE_TARGET = 0.40
ROOFLINE_SHAPES = ["2048x256x1024", "2048x1024x256", "2048x256x8000", "2048x512x1536"]


def log(msg):
    print(msg, flush=True)


def die(msg):
    print(f"bench: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


class Runner:
    """Runs a command (one at a time, except for the side-by-side quality runs), its output in
    files under work/logs, with the load average printed (and recorded) before it starts and its
    peak resident memory taken from wait4."""

    def __init__(self, work, threads):
        self.logs = os.path.join(work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.threads = threads
        self.count = 0
        self.busy_runs = 0
        self.lock = threading.Lock()

    def run(self, name, cmd, stdout_path=None):
        load = os.getloadavg()
        busy = load[0] > self.threads + 0.5
        with self.lock:
            self.count += 1
            count = self.count
            self.busy_runs += busy
        log(f"  [{datetime.datetime.now():%H:%M:%S}] load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
            f"{'  (BUSY: other processes are running; this run is timed anyway)' if busy else ''}  {name}")
        base = os.path.join(self.logs, f"{count:03d}-{name}")
        out_path = stdout_path or base + ".out"
        with open(out_path, "wb") as out, open(base + ".err", "wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        with open(base + ".err", encoding="utf-8", errors="replace") as f:
            err_text = f.read()
        if proc.returncode != 0:
            die(f"{name} failed (exit {proc.returncode}): {' '.join(cmd)}\n{err_text[-3000:]}")
        with open(out_path, encoding="utf-8", errors="replace") as f:
            out_text = f.read() if stdout_path is None else ""
        return {"stdout": out_text, "stderr": err_text, "peak_rss_mib": usage.ru_maxrss / 1024.0,
                "load": [round(x, 2) for x in load], "busy": busy}


def json_lines(text):
    records = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def read_lines(path, limit=None):
    with open(path, encoding="utf-8") as f:
        lines = []
        for line in f:
            if limit is not None and len(lines) >= limit:
                break
            lines.append(line.rstrip("\n"))
    return lines


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


# --------------------------------------------------------------------------- data

def prepare_data(args, runner, work):
    """The slice, heed's tokenizer, pieces for the reference, filtered identically for both."""
    data = os.path.join(work, "data")
    stamp_path = os.path.join(data, "prepared.json")
    if args.reuse_models:  # the models were trained on this data with its tokenizer: keep both
        if not os.path.exists(stamp_path):
            die(f"--reuse-models: no prepared data in {data}")
        with open(stamp_path) as f:
            log(f"data: reusing {data} as prepared for the models")
            return json.load(f)
    corpus = os.path.abspath(args.corpus)
    stamp = {"corpus": corpus, "src": args.src, "tgt": args.tgt, "train_lines": args.train_lines, "dev_lines": args.dev_lines,
             "vocab_size": args.vocab_size, "max_len": args.max_len, "heed": os.path.abspath(args.heed),
             "heed_mtime": os.path.getmtime(args.heed)}
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            prepared = json.load(f)
        if prepared.get("stamp") == stamp:
            log(f"data: reusing {data}")
            return prepared
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)  # heed's encoding of the old data
    os.makedirs(data)
    heed = args.heed
    raw = {}
    for split in ("train", "dev"):
        for lang in (args.src, args.tgt):
            path = os.path.join(corpus, f"{split}.{lang}")
            if not os.path.exists(path):
                die(f"missing {path} (the corpus folder needs train.{args.src}/.{args.tgt} and dev.*)")
            lines = read_lines(path, args.train_lines if split == "train" else (args.dev_lines or None))
            raw[split, lang] = [" ".join(line.split()) for line in lines]  # as heed trims
            write_lines(os.path.join(data, f"{split}-all.{lang}"), raw[split, lang])
    if len(raw["train", args.src]) != len(raw["train", args.tgt]):
        die("train source and target have different line counts")
    tok = os.path.join(data, "tokenizer.json")
    runner.run("tokenizer-train", [heed, "--threads", str(args.threads), "tokenizer", "train",
                                   "--vocab-size", str(args.vocab_size), "-o", tok,
                                   os.path.join(data, f"train-all.{args.src}"),
                                   os.path.join(data, f"train-all.{args.tgt}")])
    enc = {}
    for split in ("train", "dev"):
        for lang in (args.src, args.tgt):
            for kind, flag in (("pieces", []), ("ids", ["--ids"])):
                out = os.path.join(data, f"{split}-all.{kind}.{lang}")
                runner.run(f"encode-{split}-{lang}-{kind}",
                           [heed, "--threads", str(args.threads), "tokenizer", "encode", "-m", tok,
                            "-i", os.path.join(data, f"{split}-all.{lang}"), "-o", out] + flag)
                enc[split, lang, kind] = [line.split() for line in read_lines(out)]

    # pieces <-> ids: same count per line and a one-to-one map, so the whitespace-separated
    # pieces are exactly the id sequences heed uses
    piece_to_id, id_to_piece = {}, {}
    for split in ("train", "dev"):
        for lang in (args.src, args.tgt):
            for pieces, ids in zip(enc[split, lang, "pieces"], enc[split, lang, "ids"]):
                if len(pieces) != len(ids):
                    die(f"{split}.{lang}: a line has {len(pieces)} pieces but {len(ids)} ids "
                        "(a piece contains whitespace?)")
                for p, i in zip(pieces, ids):
                    if piece_to_id.setdefault(p, i) != i or id_to_piece.setdefault(i, p) != p:
                        die(f"piece '{p}' / id {i} do not map one to one")

    keep = [k for k in range(len(raw["train", args.src]))
            if all(0 < len(enc["train", lang, "ids"][k]) < args.max_len for lang in (args.src, args.tgt))]
    for lang in (args.src, args.tgt):
        write_lines(os.path.join(data, f"train.{lang}"), [raw["train", lang][k] for k in keep])
        write_lines(os.path.join(data, f"train.pieces.{lang}"),
                    [" ".join(enc["train", lang, "pieces"][k]) for k in keep])
        write_lines(os.path.join(data, f"dev.{lang}"), raw["dev", lang])
        write_lines(os.path.join(data, f"dev.pieces.{lang}"), [" ".join(p) for p in enc["dev", lang, "pieces"]])
    with open(os.path.join(data, "train.ids.json"), "w") as f:
        json.dump([[[int(x) for x in enc["train", lang, "ids"][k]] for lang in (args.src, args.tgt)]
                   for k in keep], f)
    src_tok = sum(len(enc["train", args.src, "ids"][k]) + 1 for k in keep)
    tgt_tok = sum(len(enc["train", args.tgt, "ids"][k]) + 1 for k in keep)
    prepared = {
        "stamp": stamp, "dir": data, "tokenizer": tok,
        "train_lines_read": len(raw["train", args.src]), "train_pairs": len(keep),
        "train_pairs_left_out": len(raw["train", args.src]) - len(keep),
        "dev_sentences": len(raw["dev", args.src]),
        "distinct_pieces_train": len({p for k in keep for lang in (args.src, args.tgt)
                                      for p in enc["train", lang, "pieces"][k]}),
        "src_tokens_with_eos": src_tok, "tgt_tokens_with_eos": tgt_tok,
        "lengths": [[len(enc["train", args.src, "ids"][k]) + 1, len(enc["train", args.tgt, "ids"][k]) + 1]
                    for k in keep],
    }
    with open(stamp_path, "w") as f:
        json.dump(prepared, f)
    log(f"data: {prepared['train_pairs']} training pairs (of the first {prepared['train_lines_read']}; "
        f"{prepared['train_pairs_left_out']} left out: empty or >= {args.max_len} pieces), "
        f"{prepared['dev_sentences']} dev sentences, {prepared['distinct_pieces_train']} distinct pieces")
    return prepared


def verify_heed_cache(cache_dir, data):
    """The corpus heed's trainer encoded (its cache file) holds exactly the ids we checked."""
    files = glob.glob(os.path.join(cache_dir, "corpus-*.bin"))
    if len(files) != 1:
        return f"expected one corpus cache file in {cache_dir}, found {len(files)}"
    with open(files[0], "rb") as f:
        blob = f.read()
    if blob[:8] != b"HEEDCRP2":
        return f"{files[0]}: unknown cache format {blob[:8]!r}"
    _key, pairs, tokens = struct.unpack_from("<QQQ", blob, 8)
    token_bytes, _ = struct.unpack_from("<II", blob, 32)
    off = 40 + 6 * 8
    lengths = struct.unpack_from(f"<{2 * pairs}I", blob, off)
    off += 8 * pairs
    ids = struct.unpack_from(f"<{tokens}{'H' if token_bytes == 2 else 'i'}", blob, off)
    with open(os.path.join(data["dir"], "train.ids.json")) as f:
        expected = json.load(f)
    if pairs != len(expected):
        return f"heed kept {pairs} pairs, expected {len(expected)}"
    pos = 0
    for k, (src, tgt) in enumerate(expected):
        if (lengths[2 * k], lengths[2 * k + 1]) != (len(src), len(tgt)):
            return f"pair {k}: lengths differ"
        if list(ids[pos:pos + len(src)]) != src or list(ids[pos + len(src):pos + len(src) + len(tgt)]) != tgt:
            return f"pair {k}: ids differ"
        pos += len(src) + len(tgt)
    return None


# --------------------------------------------------------------------------- FLOPs

def train_flops_per_target_token(arch, lengths, vocab):
    """Matmul FLOPs of one training update per target label, forward + backward (3x forward),
    over the real (non-pad) tokens: n = source tokens incl. </s>, m = target labels incl. </s>."""
    macs = 0
    if arch == "transformer":
        s = ARCHS[arch]["sizes"]
        d, f, le, ld = s["d_model"], s["ffn_dim"], s["enc_layers"], s["dec_layers"]
        for n, m in lengths:
            macs += le * (n * (4 * d * d + 2 * d * f) + 2 * n * n * d)        # QKV, out, FFN; QKᵀ, AV
            macs += ld * (m * (4 * d * d + 2 * d * f) + 2 * m * m * d          # self-attention, FFN
                          + m * 2 * d * d + n * 2 * d * d + 2 * m * n * d)    # cross-attention
            macs += m * d * vocab                                              # output (tied)
    else:
        s = ARCHS[arch]["sizes"]
        e, h, dd, a, l = s["emb_dim"], s["enc_hidden"], s["dec_hidden"], s["attn_dim"], s["readout_dim"]
        for n, m in lengths:
            macs += n * 2 * 3 * h * (e + h)           # bidirectional encoder GRU
            macs += n * 2 * h * a + 2 * h * dd        # U_a h_j; W_init
            macs += m * (dd * a + n * a + n * 2 * h   # W_a s, v_a scores, context
                         + 3 * dd * (e + 2 * h + dd)  # decoder GRU cell
                         + (dd + 2 * h + e) * l       # readout
                         + l * vocab)                 # output
    return 3 * 2 * macs / sum(m for _, m in lengths)


def roofline(args, runner):
    cmd = [args.heed, "--threads", str(args.threads), "bench", "ops"]
    for shape in ROOFLINE_SHAPES:
        cmd += ["--shape", shape]
    r = runner.run("bench-ops", cmd)
    cases = []
    for line in r["stdout"].splitlines():
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"\d+x\d+x\d+", parts[0]):
            try:
                cases.append({"case": " ".join(parts[:-3]), "heed": float(parts[-3]),
                              "onednn": float(parts[-2])})
            except ValueError:
                pass
    if not cases:
        die("could not read the output of heed bench ops:\n" + r["stdout"])
    best = max(cases, key=lambda c: c["onednn"])
    return {"gflops": best["onednn"], "case": best["case"], "cases": cases, "load": r["load"]}


# --------------------------------------------------------------------------- runs

def heed_config(args, data, arch, *, steps=0, seconds=0.0):
    a = ARCHS[arch]
    return {
        "seed": args.seed,
        "model": {"arch": a["heed_arch"], "dropout": 0.1, "share_embeddings": False,
                  ("gru" if arch == "gru" else "transformer"): dict(a["sizes"])},
        "data": {"train": {"src": os.path.join(data["dir"], f"train.{args.src}"),
                           "tgt": os.path.join(data["dir"], f"train.{args.tgt}")},
                 "max_length": args.max_len, "cache_dir": os.path.join(args.work, "cache")},
        "tokenizer": {"path": data["tokenizer"], "vocab_size": args.vocab_size},
        "training": {"optimizer": "adam", "learning_rate": a["lr"], "beta1": 0.9, "beta2": a["beta2"],
                     "eps": a["eps"], "schedule": a["schedule"], "warmup_steps": a["warmup"],
                     "clip_norm": 1.0, "label_smoothing": 0.1, "batch_tokens": args.batch_tokens,
                     "batch_unit": "target", "accumulate": 1, "max_steps": steps, "max_time": seconds,
                     "log_every": args.warmup, "validate_every": 1000000000, "keep_last": 1},
    }


def run_heed_train(args, runner, data, arch, name, *, steps=0, seconds=0.0, threads=None):
    model_dir = os.path.join(args.work, "models", name)
    shutil.rmtree(model_dir, ignore_errors=True)
    os.makedirs(os.path.dirname(model_dir), exist_ok=True)
    cfg_path = model_dir + ".config.json"
    with open(cfg_path, "w") as f:
        json.dump(heed_config(args, data, arch, steps=steps, seconds=seconds), f, indent=1)
    r = runner.run(name, [args.heed, "--threads", str(threads or args.threads), "train", "-c", cfg_path, "-m", model_dir])
    m = re.search(r"training data: (\d+) pairs kept of (\d+)", r["stderr"])
    if not m or int(m.group(1)) != data["train_pairs"] or int(m.group(2)) != data["train_pairs"]:
        die(f"{name}: heed did not keep all {data['train_pairs']} training pairs:\n{r['stderr'][-2000:]}")
    with open(os.path.join(model_dir, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    train = [x for x in records if x.get("type") == "train"]
    tokens = secs = 0.0
    prev = None
    for x in train:
        if prev is not None and x["step"] > args.warmup:
            dt = x["elapsed"] - prev["elapsed"]
            tokens += x["tokens_per_s"] * dt
            secs += dt
        prev = x
    stopped = re.search(r"training stopped \(\w+\) after (\d+) steps", r["stderr"])
    return {"model_dir": model_dir, "steps": int(stopped.group(1)) if stopped else None,
            "tok_per_s": tokens / secs if secs > 0 else None,
            "final_train_nll": train[-1]["nll"] if train else None,
            "peak_rss_mib": r["peak_rss_mib"], "load": r["load"], "busy": r["busy"]}


def run_ref_train(args, runner, data, arch, name, *, steps=None, minutes=None, save=None, threads=None):
    cmd = [args.python, args.peer, "train", "--arch", arch,
           "--src", os.path.join(data["dir"], f"train.pieces.{args.src}"),
           "--tgt", os.path.join(data["dir"], f"train.pieces.{args.tgt}"),
           "--vocab-size", str(args.vocab_size), "--max-len", str(args.max_len),
           "--batch-tokens", str(args.batch_tokens), "--threads", str(threads or args.threads), "--seed", str(args.seed),
           "--log-every", str(args.warmup), "--warmup-steps", str(args.warmup), "--dropout", "0.1"]
    if steps is not None:
        cmd += ["--steps", str(steps)]
    if minutes is not None:
        cmd += ["--minutes", str(minutes)]
    if save:
        cmd += ["--save", save]
    r = runner.run(name, cmd)
    records = json_lines(r["stdout"])
    setup = next((x for x in records if x.get("type") == "setup"), None)
    final = next((x for x in records if x.get("type") == "final"), None)
    if not setup or not final:
        die(f"{name}: no setup/final line from the reference:\n{r['stdout'][-2000:]}\n{r['stderr'][-2000:]}")
    if setup["pairs"] != data["train_pairs"]:
        die(f"{name}: the reference kept {setup['pairs']} pairs, heed {data['train_pairs']}")
    if setup["vocab"] != min(data["distinct_pieces_train"] + 4, args.vocab_size):
        die(f"{name}: the reference's vocabulary has {setup['vocab']} entries, expected the "
            f"{data['distinct_pieces_train']} distinct pieces + 4 specials (a piece it cut or took for a special?)")
    return {"steps": final["steps"], "tok_per_s": final["tgt_tok_per_s"], "final_train_nll": final["final_train_nll"],
            "vocab": setup["vocab"], "params": setup["params"], "blas": setup.get("blas"),
            "torch": setup.get("torch"), "peak_rss_mib": r["peak_rss_mib"], "load": r["load"], "busy": r["busy"]}


def run_heed_translate(args, runner, data, arch, model_dir, beam, name):
    out = os.path.join(args.work, "out", name + ".txt")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    r = runner.run(name, [args.heed, "--threads", str(args.threads), "translate", "-m", model_dir,
                          "-i", os.path.join(data["dir"], f"dev.{args.src}"), "-o", out, "--beam", str(beam),
                          "--length-penalty", str(ARCHS[arch]["alpha"]), "--max-length-ratio", "2",
                          "--max-length-offset", "0", "--batch-size", "32"])
    m = re.search(r"translate: \d+ lines, (\d+) sentences, (\d+) output tokens in ([\d.]+) s: ([\d.]+) sentences/s, "
                  r"([\d.]+) tokens/s", r["stderr"])
    if not m:
        die(f"{name}: no summary line from heed translate:\n{r['stderr'][-2000:]}")
    return {"sentences": int(m.group(1)), "tgt_tokens": int(m.group(2)), "seconds": float(m.group(3)),
            "sent_per_s": float(m.group(4)), "tok_per_s": float(m.group(5)), "output": out,
            "peak_rss_mib": r["peak_rss_mib"], "load": r["load"], "busy": r["busy"]}


def run_ref_translate(args, runner, data, model, beam, name, int8=False):
    out = os.path.join(args.work, "out", name + ".pieces")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    program = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-peer-int8.py"), args.peer] if int8 else [args.peer]
    r = runner.run(name, [args.python, *program, "translate", "--model", model,
                          "--input", os.path.join(data["dir"], f"dev.pieces.{args.src}"), "--beam", str(beam),
                          "--batch-size", "32", "--max-len-ratio", "2", "--threads", str(args.threads)],
                   stdout_path=out)
    rec = next((x for x in json_lines(r["stderr"]) if x.get("type") == "translate"), None)
    if not rec:
        die(f"{name}: no translate line from the reference:\n{r['stderr'][-2000:]}")
    text = os.path.join(args.work, "out", name + ".txt")
    runner.run(name + "-decode", [args.heed, "tokenizer", "decode", "-m", data["tokenizer"], "-i", out, "-o", text])
    return {"sentences": rec["sentences"], "tgt_tokens": rec["tgt_tokens"], "seconds": rec["seconds"],
            "sent_per_s": rec["sent_per_s"], "tok_per_s": rec["tgt_tok_per_s"], "alpha": rec.get("alpha"),
            "output": text, "peak_rss_mib": r["peak_rss_mib"], "load": r["load"], "busy": r["busy"]}


# Run by the reference's interpreter: heed's model directory -> a checkpoint of the reference
# (its own build_model and checkpoint format), vocabulary = heed's pieces in id order.
EXPORT_SCRIPT = r"""
import json, os, sys
import torch
peer, model_dir, arch, out = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(peer))
import torch_nmt as P
with open(os.path.join(model_dir, "config.json")) as f:
    cfg = json.load(f)["model"]
with open(os.path.join(model_dir, "tokenizer.json")) as f:
    itos = json.load(f)["vocab"]
if itos[:4] != P.SPECIALS:
    sys.exit(f"export: heed's first pieces {itos[:4]} are not the reference's specials {P.SPECIALS}")
if arch == "gru":
    g = cfg["gru"]
    config = dict(P.GRU_DEFAULTS, emb=g["emb_dim"], enc_hidden=g["enc_hidden"], dec_hidden=g["dec_hidden"],
                  attn_dim=g["attn_dim"], readout_dim=g["readout_dim"], readout_act=g["readout_act"],
                  tie_output=g["tie_output"], dropout=cfg["dropout"])
else:
    t = cfg["transformer"]
    config = dict(P.TRANSFORMER_DEFAULTS, d_model=t["d_model"], heads=t["heads"], ffn=t["ffn_dim"],
                  enc_layers=t["enc_layers"], dec_layers=t["dec_layers"], pre_norm=t["pre_norm"],
                  share_all_embeddings=cfg["share_embeddings"], dropout=cfg["dropout"])
model = P.build_model(arch, len(itos), config)
tensors, _ = P.read_safetensors(os.path.join(model_dir, "model.safetensors"))
state = model.state_dict()
params = {name for name, _ in model.named_parameters()}
missing = sorted(params - tensors.keys())
if missing:
    sys.exit(f"export: heed's model has no {missing[:5]}")
for name, (dtype, shape, values) in tensors.items():
    if name not in state or list(state[name].shape) != shape:
        sys.exit(f"export: {name} {shape} does not fit the reference model")
    state[name] = torch.tensor(values, dtype=torch.float32).reshape(shape)
model.load_state_dict(state)
torch.save({"arch": arch, "config": config, "vocab": itos, "state_dict": model.state_dict(),
            "train_args": {"exported_from": "heed"}}, out + ".tmp")
os.replace(out + ".tmp", out)
"""


def export_to_reference(args, runner, arch, model_dir, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    runner.run(f"export-{arch}", [args.python, "-c", EXPORT_SCRIPT, args.peer, model_dir, arch, out])
    return out


def identical_lines(a, b):
    x, y = read_lines(a), read_lines(b)
    return sum(1 for p, q in zip(x, y) if p == q), max(len(x), len(y))


def translate_pairs(args, runner, data, arch, heed_model, ref_model, beam, tag):
    pairs = []
    for i in range(args.pairs):
        hh = run_heed_translate(args, runner, data, arch, heed_model, beam, f"translate{tag}-{arch}-b{beam}-heed-{i}")
        rr = run_ref_translate(args, runner, data, ref_model, beam, f"translate{tag}-{arch}-b{beam}-ref-{i}")
        pairs.append({"heed": hh, "ref": rr})
        log(f"    heed {hh['sent_per_s']:.1f} sent/s {hh['tok_per_s']:.0f} tok/s | reference "
            f"{rr['sent_per_s']:.1f} sent/s {rr['tok_per_s']:.0f} tok/s | ratio (sent/s) "
            f"{hh['sent_per_s'] / rr['sent_per_s']:.2f}")
    sent, tok = summarise_pairs(pairs, "sent_per_s"), summarise_pairs(pairs, "tok_per_s")
    return {"pairs": pairs, "sent_per_s": sent, "tok_per_s": tok,
            "target_met": (sent["median_ratio"] or 0) >= TRANSLATE_TARGET}


def int8_comparison(args, runner, data, arch, heed_model, ref_model):
    """Step 6: heed's model and its int8 copy (heed quantize) against the same model in the
    reference, fp32 and under PyTorch's dynamic int8 quantization; the four alternate."""
    quantized = os.path.join(args.work, "models", f"{arch}-int8")
    shutil.rmtree(quantized, ignore_errors=True)
    runner.run(f"quantize-{arch}", [args.heed, "quantize", "-m", heed_model, "-o", quantized])
    result = {}
    for beam in (1, 5):
        log(f"  int8 translation, {arch}, beam {beam}: heed fp32, heed int8, reference fp32, reference int8")
        tag = f"int8-{arch}-b{beam}"
        pairs = []
        for i in range(args.pairs):
            run = {"heed_fp32": run_heed_translate(args, runner, data, arch, heed_model, beam, f"{tag}-heed-fp32-{i}"),
                   "heed_int8": run_heed_translate(args, runner, data, arch, quantized, beam, f"{tag}-heed-int8-{i}"),
                   "ref_fp32": run_ref_translate(args, runner, data, ref_model, beam, f"{tag}-ref-fp32-{i}"),
                   "ref_int8": run_ref_translate(args, runner, data, ref_model, beam, f"{tag}-ref-int8-{i}", int8=True)}
            pairs.append(run)
            log("    " + " | ".join(f"{k} {v['sent_per_s']:.1f} sent/s" for k, v in run.items()))
        ratios = lambda a, b: [round(p[a]["sent_per_s"] / p[b]["sent_per_s"], 3) for p in pairs]
        result[f"beam{beam}"] = {
            "pairs": pairs,
            "sent_per_s": {k: statistics.median(p[k]["sent_per_s"] for p in pairs) for k in pairs[0]},
            "ratios": {"heed_int8/ref_int8": ratios("heed_int8", "ref_int8"),
                       "heed_int8/heed_fp32": ratios("heed_int8", "heed_fp32"),
                       "ref_int8/ref_fp32": ratios("ref_int8", "ref_fp32")},
            "bleu": {k: bleu(args, runner, data, pairs[0][k]["output"], f"bleu-{tag}-{k}") for k in pairs[0]},
        }
    return result


def given_model_data(args, runner, arch, model_dir):
    """The int8 phase's data for a trained heed model: the dev set (--dev-lines), and its source
    as pieces of the model's own tokenizer for the reference."""
    data = os.path.join(args.work, f"data-{arch}")
    os.makedirs(data, exist_ok=True)
    for lang in (args.src, args.tgt):
        lines = read_lines(os.path.join(args.corpus, f"dev.{lang}"), args.dev_lines or None)
        write_lines(os.path.join(data, f"dev.{lang}"), [" ".join(line.split()) for line in lines])
    tok = os.path.join(model_dir, "tokenizer.json")
    runner.run(f"encode-dev-{arch}", [args.heed, "--threads", str(args.threads), "tokenizer", "encode", "-m", tok,
                                      "-i", os.path.join(data, f"dev.{args.src}"),
                                      "-o", os.path.join(data, f"dev.pieces.{args.src}")])
    return {"dir": data, "tokenizer": tok}


def bleu(args, runner, data, hyp, name):
    r = runner.run(name, [args.heed, "bleu", os.path.join(data["dir"], f"dev.{args.tgt}"), "-i", hyp, "-b"])
    return float(r["stdout"].split()[0])


def summarise_pairs(pairs, key):
    ratios = [p["heed"][key] / p["ref"][key] for p in pairs if p["heed"][key] and p["ref"][key]]
    return {"heed_median": statistics.median(p["heed"][key] for p in pairs),
            "ref_median": statistics.median(p["ref"][key] for p in pairs),
            "ratios": [round(x, 3) for x in ratios],
            "median_ratio": statistics.median(ratios) if ratios else None}


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="folder with train.SRC/.TGT and dev.SRC/.TGT")
    ap.add_argument("--peer", required=True, help="the reference torch_nmt.py")
    ap.add_argument("--heed", required=True, help="the heed executable (a Release build)")
    ap.add_argument("--work", required=True, help="work folder (data, models, logs)")
    ap.add_argument("--json", help="write the results here (default: WORK/bench.json)")
    ap.add_argument("--python", default="/usr/bin/python3", help="Debian's interpreter (sees python3-torch)")
    ap.add_argument("--src", default="en")
    ap.add_argument("--tgt", default="de")
    ap.add_argument("--archs", default="gru,transformer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=3, help="heed/reference pairs per measurement")
    ap.add_argument("--train-lines", type=int, default=100000, help="the training slice: the first N pairs")
    ap.add_argument("--dev-lines", type=int, default=0, help="translate the first N dev sentences (0: all)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--max-len", type=int, default=100)
    ap.add_argument("--batch-tokens", type=int, default=2000, help="target labels incl. </s> per batch")
    ap.add_argument("--warmup", type=int, default=10, help="updates left out of the throughput")
    ap.add_argument("--steps", type=int, default=60, help="timed updates after the warm-up (a multiple of --warmup)")
    ap.add_argument("--quality-minutes", type=float, default=30, help="equal training time for the quality runs")
    ap.add_argument("--quality-side-by-side", action="store_true",
                    help="train heed and the reference for the quality runs at the same time, one thread "
                         "each (half the wall time; both see the same machine load)")
    ap.add_argument("--phases", default="speed,quality", help="speed, quality, int8 (comma-separated)")
    ap.add_argument("--int8-models", default="",
                    help="int8 phase: trained heed models, e.g. gru=DIR,transformer=DIR (each with its tokenizer)")
    ap.add_argument("--reuse-models", action="store_true",
                    help="quality phase: translate with the models (and data) of an earlier run in --work "
                         "instead of training them again")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    phases = set(args.phases.split(","))
    if not phases or not phases <= {"speed", "quality", "int8"}:
        die("--phases: a comma-separated list of speed, quality, int8")
    int8_models = dict(item.split("=", 1) for item in args.int8_models.split(",") if "=" in item)
    if "int8" in phases and not int8_models:
        die("--phases int8 needs --int8-models gru=DIR,transformer=DIR")
    for arch, model_dir in int8_models.items():
        if arch not in ARCHS or not os.path.isfile(os.path.join(model_dir, "model.safetensors")):
            die(f"--int8-models: {arch}={model_dir} is not gru= or transformer= a heed model directory")
    if not os.path.isfile(args.peer):
        die(f"the reference {args.peer} is missing (give its path with --peer)")
    if not os.access(args.heed, os.X_OK):
        die(f"{args.heed} is not an executable heed")
    if args.steps % args.warmup != 0:
        die("--steps must be a multiple of --warmup (heed's throughput windows are --warmup updates long)")
    if args.pairs < 1 or args.quality_minutes <= 0:
        die("--pairs must be >= 1 and --quality-minutes > 0")
    archs = args.archs.split(",")
    for a in archs:
        if a not in ARCHS:
            die(f"unknown architecture {a} (gru, transformer)")
    args.work = os.path.abspath(args.work)
    args.heed = os.path.abspath(args.heed)
    os.makedirs(args.work, exist_ok=True)
    json_path = args.json or os.path.join(args.work, "bench.json")
    runner = Runner(args.work, args.threads)

    def git(*a):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        try:
            return subprocess.run(["git", "-C", root, *a], capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "heed_commit": git("rev-parse", "HEAD"), "heed_tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
              "cpu": cpu, "cores": os.cpu_count(), "threads": args.threads,
              "settings": {k: v for k, v in vars(args).items() if k not in ("work", "json", "heed", "peer", "python")},
              "corpus": os.path.basename(os.path.abspath(args.corpus))}
    log(f"heed {result['heed_commit'][:12]}{' (uncommitted changes)' if result['heed_tree_dirty'] else ''}, "
        f"{cpu}, {args.threads} threads each")

    def save(complete=True):  # after every phase, so an interrupted run leaves its figures
        result["complete"] = complete
        result["busy_runs"] = runner.busy_runs
        result["load_end"] = [round(x, 2) for x in os.getloadavg()]
        tmp = json_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, json_path)

    result["vnni"] = any(f in open("/proc/cpuinfo").read().split() for f in ("avx512_vnni", "avx_vnni"))
    result["train"], result["translate"], result["quality"], result["int8"] = {}, {}, {}, {}
    if phases & {"speed", "quality"}:
        data = prepare_data(args, runner, args.work)
        result["data"] = {k: v for k, v in data.items() if k not in ("stamp", "lengths", "dir", "tokenizer")}
        result["roofline"] = roofline(args, runner)
        log(f"roofline: {result['roofline']['gflops']:.1f} GFLOP/s (bare oneDNN, {result['roofline']['case']})")

    total = args.warmup + args.steps
    for arch in (archs if "speed" in phases else []):
        log(f"training speed, {arch}: {args.pairs} x (heed, reference), {total} updates, first {args.warmup} excluded")
        pairs = []
        for i in range(args.pairs):
            h = run_heed_train(args, runner, data, arch, f"train-{arch}-heed-{i}", steps=total)
            if i == 0:
                problem = verify_heed_cache(os.path.join(args.work, "cache"), data)
                if problem:
                    die("heed does not train on the token sequences given to the reference: " + problem)
            r = run_ref_train(args, runner, data, arch, f"train-{arch}-ref-{i}", steps=total)
            pairs.append({"heed": h, "ref": r})
            log(f"    heed {h['tok_per_s']:.0f} tok/s {h['peak_rss_mib']:.0f} MiB | reference {r['tok_per_s']:.0f} "
                f"tok/s {r['peak_rss_mib']:.0f} MiB ({r['blas']}) | ratio {h['tok_per_s'] / r['tok_per_s']:.2f}")
        flops = train_flops_per_target_token(arch, data["lengths"], args.vocab_size)
        speed = summarise_pairs(pairs, "tok_per_s")
        memory = summarise_pairs(pairs, "peak_rss_mib")
        gflops = speed["heed_median"] * flops / 1e9
        roof = result["roofline"]["gflops"]
        needed = ARCHS[arch]["train_target"] * speed["ref_median"]
        capped = needed * flops / 1e9 > ROOFLINE_CAP * roof
        target_tok = ROOFLINE_CAP * roof * 1e9 / flops if capped else needed
        result["train"][arch] = {
            "pairs": pairs, "tok_per_s": speed, "peak_rss_mib": memory,
            "mflop_per_target_token": flops / 1e6, "heed_gflops": gflops, "roofline_fraction": gflops / roof,
            "target": {"kind": f"70% of the roofline ({target_tok:.0f} tok/s)" if capped
                       else f"{ARCHS[arch]['train_target']}x the reference",
                       "heed_tok_per_s_needed": target_tok, "met": speed["heed_median"] >= target_tok},
            "memory_target_met": memory["heed_median"] <= memory["ref_median"],
        }
        if arch == "transformer":
            result["train"][arch]["roofline_target_met"] = gflops / roof >= TRANSFORMER_ROOFLINE_TARGET
        result["train"][arch]["verified_same_tokens"] = True
        save(complete=False)

    for arch in (archs if "quality" in phases else []):
        minutes = args.quality_minutes
        ref_model = os.path.join(args.work, "models", f"quality-{arch}-ref.pt")
        train_heed = lambda threads=None: run_heed_train(args, runner, data, arch, f"quality-{arch}-heed",
                                                         seconds=minutes * 60, threads=threads)
        train_ref = lambda threads=None: run_ref_train(args, runner, data, arch, f"quality-{arch}-ref",
                                                       minutes=minutes, save=ref_model, threads=threads)
        trained_path = os.path.join(args.work, "models", f"quality-{arch}.json")
        if args.reuse_models:
            if not os.path.exists(trained_path) or not os.path.exists(ref_model):
                die(f"--reuse-models: no models of an earlier quality run in {args.work}/models")
            with open(trained_path) as f:
                trained = json.load(f)
            h, r = trained["heed"], trained["ref"]
            minutes, args.quality_side_by_side = trained["minutes"], trained["side_by_side"]
            log(f"equal-time training, {arch}: reusing the models of an earlier run ({minutes:g} min)")
        elif args.quality_side_by_side:
            log(f"equal-time training, {arch}: {minutes:g} min, heed and the reference at the same time, 1 thread each")
            with ThreadPoolExecutor(2) as pool:
                h_future, r_future = pool.submit(train_heed, 1), pool.submit(train_ref, 1)
                h, r = h_future.result(), r_future.result()
        else:
            log(f"equal-time training, {arch}: {minutes:g} min each")
            h, r = train_heed(), train_ref()
        if not args.reuse_models:
            with open(trained_path, "w") as f:
                json.dump({"minutes": minutes, "side_by_side": args.quality_side_by_side, "heed": h, "ref": r}, f, indent=1)
        quality = {"minutes": minutes, "threads": 1 if args.quality_side_by_side else args.threads,
                   "side_by_side": args.quality_side_by_side,
                   "heed": {"steps": h["steps"], "final_train_nll": h["final_train_nll"]},
                   "ref": {"steps": r["steps"], "final_train_nll": r["final_train_nll"]}}
        tr = {}
        for beam in (1, 5):
            log(f"  translation, {arch}, beam {beam}: each system with its own model")
            tr[f"beam{beam}"] = t = translate_pairs(args, runner, data, arch, h["model_dir"], ref_model, beam, "")
            quality["heed"][f"bleu_beam{beam}"] = bleu(args, runner, data, t["pairs"][0]["heed"]["output"], f"bleu-{arch}-b{beam}-heed")
            quality["ref"][f"bleu_beam{beam}"] = bleu(args, runner, data, t["pairs"][0]["ref"]["output"], f"bleu-{arch}-b{beam}-ref")
        exported = export_to_reference(args, runner, arch, h["model_dir"],
                                       os.path.join(args.work, "models", f"quality-{arch}-heed-as-ref.pt"))
        for beam in (1, 5):
            log(f"  translation, {arch}, beam {beam}: both systems with heed's model")
            tr[f"same_model_beam{beam}"] = t = translate_pairs(args, runner, data, arch, h["model_dir"], exported, beam, "-same")
            same, total = identical_lines(t["pairs"][0]["heed"]["output"], t["pairs"][0]["ref"]["output"])
            t["identical_outputs"], t["sentences"] = same, total
            log(f"    identical translations: {same} of {total}")
        result["int8"][arch] = int8_comparison(args, runner, data, arch, h["model_dir"], exported)
        result["translate"][arch] = tr
        result["quality"][arch] = quality
        save(complete=False)

    for arch, model_dir in (int8_models.items() if "int8" in phases else []):
        log(f"int8, {arch}: the trained model {model_dir}")
        given = given_model_data(args, runner, arch, model_dir)
        exported = export_to_reference(args, runner, arch, model_dir, os.path.join(args.work, "models", f"given-{arch}.pt"))
        result["int8"][arch] = int8_comparison(args, runner, given, arch, model_dir, exported)
        save(complete=False)

    save()
    print_table(result, archs)
    log(f"\nresults: {json_path}")


def num(x, spec):
    return "-".rjust(int(re.match(r"\d*", spec).group() or 0)) if x is None else format(x, spec)


def print_table(result, archs):
    log("\n" + "=" * 100)
    log(f"heed vs PyTorch reference, {result['corpus']}, {result['threads']} threads each, {result['cpu']}")
    if "data" in result:
        d = result["data"]
        log(f"data: {d['train_pairs']} training pairs, {d['dev_sentences']} dev sentences; "
            f"roofline {result['roofline']['gflops']:.1f} GFLOP/s")
    log(f"runs started on a busy machine (1-min load > threads + 0.5): {result['busy_runs']}")
    log(f"{'':34}{'heed':>12}{'reference':>12}{'ratios':>24}{'median':>8}  target met")
    for arch in archs:
        log(arch)
        if arch in result["train"]:
            print_train_rows(result["train"][arch])
        if arch in result["quality"]:
            print_quality_rows(result["translate"][arch], result["quality"][arch])
        if arch in result["int8"]:
            print_int8_rows(result["int8"][arch], result["vnni"])
    log("=" * 100)


def print_train_rows(t):
    ok = lambda met: "yes" if met else "NO"
    s, m = t["tok_per_s"], t["peak_rss_mib"]
    ref0 = t["pairs"][0]["ref"]
    log(f"  (reference: {ref0['blas']}, torch {ref0['torch']})")
    log(f"  {'train target tok/s':32}{s['heed_median']:12.0f}{s['ref_median']:12.0f}"
        f"{' '.join(f'{x:.2f}' for x in s['ratios']):>24}{s['median_ratio']:8.2f}  "
        f"{ok(t['target']['met'])} ({t['target']['kind']})")
    log(f"  {'train peak memory MiB':32}{m['heed_median']:12.0f}{m['ref_median']:12.0f}"
        f"{' '.join(f'{x:.2f}' for x in m['ratios']):>24}{m['median_ratio']:8.2f}  {ok(t['memory_target_met'])} (<= 1)")
    roof_note = (f"  {ok(t['roofline_target_met'])} (>= 40%)" if "roofline_target_met" in t else "")
    log(f"  {'train GFLOP/s (share of roofline)':32}{t['heed_gflops']:12.1f}{'':12}"
        f"{t['roofline_fraction'] * 100:>23.1f}%{'':8}{roof_note}  [{t['mflop_per_target_token']:.1f} MFLOP/token]")


def print_quality_rows(translate, q):
    ok = lambda met: "yes" if met else "NO"
    for prefix, title in (("", "own models"), ("same_model_", "heed's model in both")):
        log(f"  translation, {title}:")
        for beam in ("beam1", "beam5"):
            tr = translate.get(prefix + beam)
            if tr is None:
                continue
            for key, label in (("sent_per_s", "sent/s"), ("tok_per_s", "tok/s")):
                x = tr[key]
                met = f"  {ok(tr['target_met'])} (>= 3x)" if key == "sent_per_s" else ""
                log(f"  {'  ' + ('greedy' if beam == 'beam1' else 'beam 5') + ' ' + label:32}"
                    f"{num(x['heed_median'], '12.1f')}{num(x['ref_median'], '12.1f')}"
                    f"{' '.join(f'{r:.2f}' for r in x['ratios']):>24}{num(x['median_ratio'], '8.2f')}{met}")
            if "identical_outputs" in tr:
                log(f"  {'    identical translations':32}{tr['identical_outputs']:>12} of {tr['sentences']}")
    log(f"  {'equal time ' + format(q['minutes'], 'g') + ' min: updates':32}"
        f"{num(q['heed']['steps'], '12')}{num(q['ref']['steps'], '12')}")
    log(f"  {'  final train nll':32}{num(q['heed']['final_train_nll'], '12.3f')}"
        f"{num(q['ref']['final_train_nll'], '12.3f')}")
    for beam in ("beam1", "beam5"):
        log(f"  {'  dev BLEU ' + ('greedy' if beam == 'beam1' else 'beam 5'):32}"
            f"{q['heed']['bleu_' + beam]:12.2f}{q['ref']['bleu_' + beam]:12.2f}")
    if q.get("side_by_side"):
        log("  (equal-time runs trained side by side, 1 thread each)")


def print_int8_rows(int8, vnni):
    log(f"  int8 translation, one model (heed quantize | PyTorch quantize_dynamic), sent/s"
        f"{'' if vnni else '; this CPU has no VNNI'}:")
    for beam in ("beam1", "beam5"):
        x = int8[beam]
        name = "greedy" if beam == "beam1" else "beam 5"
        s, b = x["sent_per_s"], x["bleu"]
        log(f"  {'  ' + name + ' int8':32}{s['heed_int8']:12.1f}{s['ref_int8']:12.1f}"
            f"{' '.join(f'{r:.2f}' for r in x['ratios']['heed_int8/ref_int8']):>24}"
            f"{statistics.median(x['ratios']['heed_int8/ref_int8']):8.2f}")
        for key, label in (("heed_int8/heed_fp32", "heed int8 / fp32"), ("ref_int8/ref_fp32", "reference int8 / fp32")):
            log(f"  {'    ' + label:32}{'':24}{' '.join(f'{r:.2f}' for r in x['ratios'][key]):>24}"
                f"{statistics.median(x['ratios'][key]):8.2f}")
        for precision in ("fp32", "int8"):
            log(f"  {'    dev BLEU ' + precision:32}{b['heed_' + precision]:12.2f}{b['ref_' + precision]:12.2f}")


if __name__ == "__main__":
    main()

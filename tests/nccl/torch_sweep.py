# SPDX-License-Identifier: MIT
"""tests/nccl/torch_sweep.py - NCCL's collectives through libnccl-net-dvx.so, checked
exactly (docs/nccl.md). Run one process per GPU:

    torchrun --nproc-per-node 2 tests/nccl/torch_sweep.py [--max-bytes N] [--iters K]

with NCCL_NET_PLUGIN, NCCL_NET=dvx and the plugin's variables set (tests/nccl/device-run.sh
sets them per configuration). Every result is compared with what it must be, element by
element, in int32 (sums of small integers are exact). Then the same collective is timed
as nccl-tests times it: K calls back to back on tensors made once (K from 20 for small
messages down to 3 at 256 MiB; the median of three such rounds; --timed 0: the last
checked call's time instead). Prints
one line per collective and size with that time and the bus bandwidth (nccl-tests'
factors), and exits non-zero at the first wrong element.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def busbw_factor(name, n):
    if name == "all_reduce":
        return 2.0 * (n - 1) / n
    if name in ("all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"):
        return (n - 1) / n
    return 1.0


def check(name, nbytes, got, want):
    if not torch.equal(got, want):
        bad = (got != want).nonzero()
        i = bad[0].tolist() if len(bad) else "?"
        print(f"rank {dist.get_rank()}: {name} at {nbytes} B: wrong at {i}: "
              f"{got.flatten()[0:4].tolist()} ... want {want.flatten()[0:4].tolist()}",
              flush=True)
        sys.exit(1)


def setup(name, count, dev, n, r):
    """the collective on count int32 elements per rank, on tensors made once: (op, result)
    where op() runs it and result() gives (got, want) after its first call (None: nothing
    to check, the barrier)"""
    base = torch.arange(count, dtype=torch.int32, device=dev) % 1000
    total = sum(range(n))
    if name == "all_reduce":
        x = base + r
        return (lambda: dist.all_reduce(x)), lambda: (x, base * n + total)
    if name == "all_gather":
        x = base + r
        out = torch.empty(count * n, dtype=torch.int32, device=dev)
        return ((lambda: dist.all_gather_into_tensor(out, x)),
                lambda: (out, torch.cat([base + k for k in range(n)])))
    if name == "reduce_scatter":
        inp = torch.cat([base + k + r for k in range(n)])
        x = torch.empty(count, dtype=torch.int32, device=dev)
        return ((lambda: dist.reduce_scatter_tensor(x, inp)),
                lambda: (x, (base + r) * n + total))
    if name == "broadcast":
        x = base + 7 if r == 0 else torch.zeros(count, dtype=torch.int32, device=dev)
        return (lambda: dist.broadcast(x, src=0)), lambda: (x, base + 7)
    if name == "reduce":
        x = base + r
        return ((lambda: dist.reduce(x, dst=0)),
                lambda: (x, base * n + total if r == 0 else base + r))
    if name == "all_to_all":
        inp = torch.cat([base + 100 * r + k for k in range(n)])
        x = torch.empty(count * n, dtype=torch.int32, device=dev)
        return ((lambda: dist.all_to_all_single(x, inp)),
                lambda: (x, torch.cat([base + 100 * k + r for k in range(n)])))
    if name == "send_recv":
        x = base + r
        peer_to, peer_from = (r + 1) % n, (r - 1) % n
        y = torch.empty(count, dtype=torch.int32, device=dev)

        def sr():
            ops = [dist.P2POp(dist.isend, x, peer_to), dist.P2POp(dist.irecv, y, peer_from)]
            for q in dist.batch_isend_irecv(ops):
                q.wait()
        return sr, lambda: (y, base + peer_from)
    if name == "gather":
        x = base + r
        outs = [torch.empty(count, dtype=torch.int32, device=dev) for _ in range(n)] if r == 0 else None
        if r == 0:
            return ((lambda: dist.gather(x, outs, dst=0)),
                    lambda: (torch.cat(outs), torch.cat([base + k for k in range(n)])))
        return (lambda: dist.gather(x, outs, dst=0)), lambda: (x, base + r)
    if name == "scatter":
        ins = [base + 10 * k for k in range(n)] if r == 0 else None
        x = torch.empty(count, dtype=torch.int32, device=dev)
        return (lambda: dist.scatter(x, ins, src=0)), lambda: (x, base + 10 * r)
    if name == "barrier":
        return dist.barrier, None
    raise ValueError(name)


def run(name, count, dev, n, r):
    """one collective on fresh tensors, checked; returns seconds"""
    op, result = setup(name, count, dev, n, r)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    op()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    if result:
        got, want = result()
        check(name, count * 4, got, want)
    return dt


def timed(name, count, dev, n, r, k, rounds=3):
    """seconds per call: the median of rounds of k calls back to back, after two calls to
    warm (a round meeting a stall of the machine does not decide). Each round starts
    after a barrier, so that no rank's round includes the time it waits for a rank that
    is still in Python between rounds"""
    f, _ = setup(name, count, dev, n, r)
    f()
    f()
    torch.cuda.synchronize()
    t = []
    for _ in range(rounds):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(k):
            f()
        torch.cuda.synchronize()
        t.append((time.perf_counter() - t0) / k)
    return sorted(t)[len(t) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-bytes", type=int, default=256 << 20)
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--calls", type=int, default=0,
                    help="calls per timed round (0: 3-20 by size)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds (the median is taken)")
    ap.add_argument("--every-rank", action="store_true",
                    help="rank 0 prints every rank's time (lines of rank R > 0 begin 'rank R')")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--timed", type=int, default=1,
                    help="1: time K calls back to back after the checked ones; 0: the last checked")
    ap.add_argument("--colls", default="all_reduce,all_gather,reduce_scatter,broadcast,reduce,"
                    "all_to_all,send_recv,gather,scatter,barrier")
    a = ap.parse_args()
    r, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", r)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    sizes = []
    b = 8
    while b <= a.max_bytes:
        if b >= a.min_bytes:
            sizes.append(b)
        b *= 4 if b < (1 << 20) else 2
    for name in a.colls.split(","):
        for nbytes in sizes if name != "barrier" else [0]:
            count = max(1, nbytes // 4)
            for _ in range(a.iters):
                dt = run(name, count, dev, n, r)
            if a.timed:
                k = a.calls or max(3, min(20, (32 << 20) // max(nbytes, 1)))
                dt = timed(name, count, dev, n, r, k, max(1, a.rounds))
            dts = [dt]
            if a.every_rank:
                # rank 0 prints them all: lines from two processes into one log mix
                t = torch.zeros(n, dtype=torch.float64, device=dev)
                t[r] = dt
                dist.all_reduce(t)
                dts = t.tolist()
            for i, x in enumerate(dts if r == 0 else []):
                bw = nbytes * busbw_factor(name, n) / x / 1e9 if x > 0 and nbytes else 0.0
                who = f"rank {i} " if i else ""
                print(f"{who}{name:15s} {nbytes:>10d} B {x * 1e6:10.1f} us {bw:8.3f} GB/s",
                      flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if r == 0:
        print("torch_sweep: every result exact", flush=True)


if __name__ == "__main__":
    main()

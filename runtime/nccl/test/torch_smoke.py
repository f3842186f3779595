"""PyTorch's torch.distributed on mscclc's libnccl.so.2, unchanged.

Run with LD_PRELOAD naming libmscclc_nccl.so (ctest nccl-gpu-torch does):
world size 1, every collective ProcessGroupNCCL issues for all_reduce
(sum, avg, premul_sum), all_gather_into_tensor, reduce_scatter_tensor,
broadcast, all_to_all_single, barrier, and an all-reduce captured in a CUDA
graph. Exit 0 pass, 1 fail, 77 skipped (no torch or no GPU).
"""
import ctypes
import os
import socket
import sys

try:
    import torch
    import torch.distributed as dist
except ModuleNotFoundError:
    print("SKIP torch is not installed")
    sys.exit(77)
except ImportError as e:
    # Installed, but it does not load on this libnccl.so.2 (a symbol it
    # links that the library lacks, say): that is a failure.
    print(f"FAIL torch does not load on libmscclc_nccl.so: {e}")
    sys.exit(1)
if not torch.cuda.is_available():
    print("SKIP no GPU")
    sys.exit(77)

failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


with open("/proc/self/maps") as maps:
    loaded = maps.read()
check("libmscclc_nccl" in loaded, "torch runs on libmscclc_nccl.so (LD_PRELOAD)")
# torch.cuda.nccl.version() is the header torch was built with; ask the
# library the process runs on instead.
version = ctypes.c_int(0)
ctypes.CDLL(None).ncclGetVersion(ctypes.byref(version))
check(version.value == 22803, f"ncclGetVersion() is mscclc's 2.28.3 ({version.value})")

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(port))
device = torch.device("cuda:0")
torch.cuda.set_device(device)
dist.init_process_group("nccl", rank=0, world_size=1, device_id=device)

x = torch.arange(4096, device=device, dtype=torch.float32)
y = x.clone()
dist.all_reduce(y)
check(torch.equal(y, x), "all_reduce sum")
y = x.clone()
dist.all_reduce(y, op=dist.ReduceOp.AVG)
check(torch.equal(y, x), "all_reduce avg")
y = x.clone()
dist.all_reduce(y, op=dist._make_nccl_premul_sum(2.0))
check(torch.equal(y, 2 * x), "all_reduce premul_sum (FSDP's pre-scaling)"
      + ("" if torch.equal(y, 2 * x) else f": {y[:4].tolist()}, expected {(2 * x)[:4].tolist()}"))
out = torch.empty_like(x)
dist.all_gather_into_tensor(out, x)
check(torch.equal(out, x), "all_gather_into_tensor")
dist.reduce_scatter_tensor(out, x)
check(torch.equal(out, x), "reduce_scatter_tensor")
y = x.clone()
dist.broadcast(y, src=0)
check(torch.equal(y, x), "broadcast")
dist.all_to_all_single(out, x)
check(torch.equal(out, x), "all_to_all_single")
dist.barrier()
check(True, "barrier")

# A captured all-reduce, replayed.
g_in = x.clone()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    dist.all_reduce(g_in)  # warm-up outside capture, as PyTorch recommends
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    dist.all_reduce(g_in)
for _ in range(3):
    g_in.copy_(x)
    graph.replay()
torch.cuda.synchronize()
check(torch.equal(g_in, x), "all_reduce in a CUDA graph, replayed")

dist.destroy_process_group()
print(f"{'FAIL' if failures else 'PASS'}: {failures} failures")
sys.exit(1 if failures else 0)

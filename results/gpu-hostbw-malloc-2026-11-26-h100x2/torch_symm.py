"""torch's NVSHMEM symmetric memory on rshmem's libnvshmem_host.so.3 (LD_PRELOAD): rendezvous,
peer buffers written and read. Run with torchrun --nproc-per-node 2."""
import os
import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
print(f"rank {rank}: torch {torch.__version__}", flush=True)
symm_mem.set_backend("NVSHMEM")
print(f"rank {rank}: backend {symm_mem.get_backend(torch.device('cuda', rank))}", flush=True)
t = symm_mem.empty(1 << 20, dtype=torch.float32, device="cuda")
t.fill_(rank + 1)
hdl = symm_mem.rendezvous(t, dist.group.WORLD.group_name)
torch.cuda.synchronize()
dist.barrier()
peer = 1 - rank
buf = hdl.get_buffer(peer, t.shape, t.dtype)
got = buf[:4].tolist()
assert got == [float(peer + 1)] * 4, got
buf.mul_(10)
torch.cuda.synchronize()
dist.barrier()
assert t[:4].tolist() == [float((rank + 1) * 10)] * 4, t[:4].tolist()
print(f"PASS rank {rank}: NVSHMEM symmetric memory rendezvous + peer read/write on rshmem", flush=True)
dist.destroy_process_group()

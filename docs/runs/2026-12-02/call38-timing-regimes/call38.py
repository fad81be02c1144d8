"""call 38: one exported module (kernelbench-31, fp32 3xTF32 winner and tf32 winner of call 37)
timed in three regimes, to find where fusetune's own figure (fp32 2.529 ms, tf32 1.254 ms) and
do_bench's (2.834 / 1.229 ms) part: do_bench (L2 flushed, back to back); one call after 50 ms
idle (cool GPU); 200 calls back to back from a CUDA graph (hot, no flush)."""
import importlib.util, statistics, sys, time
import torch, triton.testing

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m); return m

for math in ("fp32", "tf32"):
    m = load(f"{sys.path[0]}/m31-{math}.py", f"m31_{math}")
    torch.manual_seed(0)
    model = m.Model(*m.get_init_inputs()).cuda().eval()
    x = torch.rand(*m.INPUT_SHAPE, device="cuda")
    with torch.no_grad():
        model(x); torch.cuda.synchronize()
        t_bench = triton.testing.do_bench(lambda: model(x), warmup=50, rep=400, return_mode="median")
        cool = []
        for _ in range(20):
            time.sleep(0.05)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); model(x); b.record(); torch.cuda.synchronize(); cool.append(a.elapsed_time(b))
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            model(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            model(x)
        hot = []
        for rep in range(3):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(200):
                g.replay()
            b.record(); torch.cuda.synchronize(); hot.append(a.elapsed_time(b) / 200)
    print(f"{math}: do_bench {t_bench:.3f} ms | after 50 ms idle: median {statistics.median(cool):.3f} "
          f"(first {cool[0]:.3f}) | 200 back to back from a graph: {' '.join(f'{h:.3f}' for h in hot)} ms/call", flush=True)

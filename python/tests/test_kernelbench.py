"""`fusetune kernelbench`'s driver (python/fusetune_torch/kernelbench.py) without torch or a GPU:
the selection, the checkout's files, the mapping step against a stand-in fusetune binary, the
records a cut run resumes from, the table and documents. The GPU steps (tune, export,
KernelBench's eval and timing) run on the GPU machine (scripts/gpu_check.sh)."""
import json
import os
import stat
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from fusetune_torch import kernelbench as kb  # noqa: E402


def test_selection_takes_numbers_and_ranges_once_each():
    assert kb.parse_selection("31,32") == [31, 32]
    assert kb.parse_selection("1-3,2,10") == [1, 2, 3, 10]
    for bad in ["", "0", "101", "5-2", "a", "1-", "3,,4"]:
        with pytest.raises(kb.UsageError):
            kb.parse_selection(bad)


def fake_checkout(tmp_path):
    level = tmp_path / "kb" / "KernelBench" / "level2"
    level.mkdir(parents=True)
    for name in ["1_Conv2D_ReLU_BiasAdd.py", "66_Matmul_Dropout_Softmax.py", "7_Other.py"]:
        (level / name).write_text("# a KernelBench-style problem\n")
    return tmp_path / "kb"


def fake_fusetune(tmp_path):
    """A stand-in for the binary: from-torch maps problem 1 (with a trailing comment, as the real
    one writes) and 7, and refuses 66 with a reason on stderr; tune says 7 (a linear) has no
    candidates, as the real one does from the spec alone, and wants a GPU for 1."""
    script = tmp_path / "fusetune"
    script.write_text(
        "#!" + sys.executable + "\n"
        "import sys\n"
        "if sys.argv[1] == 'from-torch':\n"
        "    assert '--train' in sys.argv, 'KernelBench models run in training mode'\n"
        "    if '1_Conv2D' in sys.argv[2]:\n"
        "        print('conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | relu  # conv')\n"
        "        sys.exit(0)\n"
        "    if '7_Other' in sys.argv[2]:\n"
        "        print('linear(m=8,k=16,n=4) | relu')\n"
        "        sys.exit(0)\n"
        "    print('fusetune from-torch: not mapped: line 12: dropout in training mode is random', file=sys.stderr)\n"
        "    print('fusetune from-torch: 0 block(s), 0 conv(s) not matched', file=sys.stderr)\n"
        "    sys.exit(1)\n"
        "if sys.argv[1] == 'tune':\n"
        "    if sys.argv[2].startswith('linear'):\n"
        "        print('fusetune: the spec is valid, but tune and compile have no candidates for linear', file=sys.stderr)\n"
        "        sys.exit(2)\n"
        "    print('fusetune: no NVIDIA driver found; this command needs a GPU', file=sys.stderr)\n"
        "    sys.exit(3)\n"
        "sys.exit(9)\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_files_of_a_missing_checkout_are_a_usage_error(tmp_path):
    with pytest.raises(kb.UsageError, match="no KernelBench checkout"):
        kb.problem_files(str(tmp_path / "nowhere"), 2, [1])
    assert sorted(kb.problem_files(str(fake_checkout(tmp_path)), 2, [1, 2, 66])) == [1, 66]


def test_without_a_gpu_it_maps_writes_records_and_resumes(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(kb, "cuda_available", lambda: False)
    checkout, binary, out = fake_checkout(tmp_path), fake_fusetune(tmp_path), tmp_path / "run"
    argv = ["--kernelbench", str(checkout), "--fusetune", str(binary), "--problems", "1,66", "--out", str(out),
            "--json", str(tmp_path / "run.json")]
    assert kb.main(argv) == kb.NO_GPU  # the mapping ran; the GPU steps did not, and the exit says so
    one = json.loads((out / "level2" / "1.json").read_text())
    assert one["status"] == "mapped" and one["spec"] == "conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | relu"
    assert "no CUDA GPU" in one["reason"]
    refused = json.loads((out / "level2" / "66.json").read_text())
    assert refused["status"] == "refused" and "not mapped: line 12: dropout" in refused["reason"]
    doc = json.loads((tmp_path / "run.json").read_text())
    assert [r["problem"] for r in doc["problems"]] == [1, 66]
    assert doc["compile_modes"] == ["max-autotune", "max-autotune-no-cudagraphs"]
    table = capsys.readouterr().out
    assert "2 problems: 1 mapped, 0 verified, 0 KernelBench-correct" in table
    # A second run keeps the records (a cut run resumes); --force redoes them.
    (binary).write_text("#!/bin/sh\nexit 9\n")
    assert kb.main(argv) == kb.NO_GPU
    assert json.loads((out / "level2" / "1.json").read_text())["status"] == "mapped"
    assert kb.main(argv + ["--force"]) == kb.NO_GPU
    assert json.loads((out / "level2" / "1.json").read_text())["status"] == "refused"


def test_bad_usage_exits_2(tmp_path, capsys):
    assert kb.main(["--kernelbench", str(tmp_path), "--problems", "1"]) == kb.USAGE
    assert "no KernelBench checkout" in capsys.readouterr().err
    checkout = str(fake_checkout(tmp_path))
    assert kb.main(["--kernelbench", checkout, "--precision", "bf16"]) == kb.USAGE
    assert kb.main(["--kernelbench", checkout, "--json", "-", "--csv", "-"]) == kb.USAGE


def test_the_speedups_and_geometric_means():
    recs = [{"problem": 1, "name": "a", "status": "KernelBench-correct", "spec": "s", "verified": True,
             "correct": True, "times": {"eager": [2.0, 2.2, 2.1], "fusetune": [1.0, 1.1, 1.05],
                                        "torch.compile max-autotune": [1.5, 1.6, 1.55]}},
            {"problem": 2, "name": "b", "status": "KernelBench-correct", "spec": "s", "verified": True,
             "correct": True, "times": {"eager": [4.0, 4.0, 4.0], "fusetune": [1.0, 1.0, 1.0]}}]
    rows, means = kb.summarize(recs)
    assert rows[0]["eager ms"] == (2.0, 2.1, 2.2)
    assert rows[0]["x eager"] == pytest.approx(2.1 / 1.05)
    assert means["x eager"] == pytest.approx((2.0 * 4.0) ** 0.5)
    assert means["x torch.compile max-autotune"] == pytest.approx(1.55 / 1.05)


def test_a_gpu_run_keeps_the_verdicts_a_gpu_less_run_reached_from_the_spec(tmp_path, monkeypatch):
    checkout, binary, out = fake_checkout(tmp_path), fake_fusetune(tmp_path), tmp_path / "run"
    argv = ["--kernelbench", str(checkout), "--fusetune", str(binary), "--problems", "1,7,66", "--out", str(out),
            "--no-timing"]
    monkeypatch.setattr(kb, "cuda_available", lambda: False)
    assert kb.main(argv) == kb.NO_GPU
    status = {n: json.loads((out / "level2" / f"{n}.json").read_text())["status"] for n in (1, 7, 66)}
    assert status == {1: "mapped", 7: "not tunable yet", 66: "refused"}
    # On a GPU machine: 7 and 66 are kept (no GPU changes them), 1 is tuned (here the stand-in
    # fails its tune, so it becomes "no verified winner" and is marked a GPU run).
    monkeypatch.setattr(kb, "cuda_available", lambda: True)
    monkeypatch.setattr(kb, "kernelbench_modules", lambda path: (None, None, "stand-in checkout"))
    assert kb.main(argv) == 0
    recs = {n: json.loads((out / "level2" / f"{n}.json").read_text()) for n in (1, 7, 66)}
    assert recs[1]["status"] == "no verified winner" and recs[1]["gpu_run"] is True
    assert recs[7]["gpu_run"] is False and recs[7]["status"] == "not tunable yet"
    assert recs[66]["gpu_run"] is False and recs[66]["status"] == "refused"


def gpu_fusetune(tmp_path):
    """A stand-in binary for a GPU run: tune verifies a winner in either math mode (and, for a
    spec past the float64 reference's size, refuses as the real one does); export writes a ModelNew
    that names the math mode it was given."""
    script = tmp_path / "fusetune-gpu"
    script.write_text(
        "#!" + sys.executable + "\n"
        "import json, sys\n"
        "a = sys.argv\n"
        "if a[1] == 'from-torch':\n"
        "    print('conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | relu' if '1_Conv2D' in a[2] else 'conv3d(n=9,c=9) | relu')\n"
        "    sys.exit(0)\n"
        "math = a[a.index('--math') + 1]\n"
        "if a[1] == 'tune':\n"
        "    if a[2].startswith('conv3d'):\n"
        "        print('fusetune: the float64 reference (on the GPU) is limited to 1e+13 multiply-adds', file=sys.stderr)\n"
        "        sys.exit(2)\n"
        "    print(json.dumps({'winner': 'fused-conv.' + math}))\n"
        "    sys.exit(0)\n"
        "if a[1] == 'export':\n"
        "    open(a[a.index('-o') + 1], 'w').write('class ModelNew: math = ' + repr(math) + '\\n')\n"
        "    sys.exit(0)\n"
        "sys.exit(9)\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


class FakeEval:
    """KernelBench's eval as the driver calls it: here a ModelNew is correct when it is fp32's
    (as KernelBench 57 and 69 were on the H100: their tf32 winners differed by 3e-4)."""

    def __init__(self):
        self.judged = []

    @staticmethod
    def get_torch_dtype_from_string(name):
        return name

    def eval_kernel_against_ref(self, ref_src, new_src, seed_num, num_correct_trials, measure_performance, precision):
        assert seed_num == 42 and num_correct_trials == 5 and precision == "fp32"
        self.judged.append(new_src)

        class Result:
            correctness = "'fp32'" in new_src
            metadata = {} if correctness else {"max_difference": ["0.000370"]}
        return Result()


def test_auto_math_judges_tf32_first_and_falls_back_to_fp32_when_kernelbench_says_incorrect(tmp_path, monkeypatch):
    checkout, binary, out = fake_checkout(tmp_path), gpu_fusetune(tmp_path), tmp_path / "run"
    fake_eval = FakeEval()
    monkeypatch.setattr(kb, "cuda_available", lambda: True)
    monkeypatch.setattr(kb, "kernelbench_modules", lambda path: (fake_eval, None, None))
    argv = ["--kernelbench", str(checkout), "--fusetune", str(binary), "--problems", "1,7", "--out", str(out),
            "--no-timing"]
    assert kb.main(argv) == 0
    rec = json.loads((out / "level2" / "1.json").read_text())
    assert rec["status"] == "KernelBench-correct" and rec["correct"] is True
    assert rec["math"] == "fp32" and rec["winner"] == "fused-conv.fp32"
    # both attempts are on record: the tf32 ModelNew and why KernelBench refused it
    assert [(a["math"], a["status"]) for a in rec["attempts"]] == [("tf32", "KernelBench-incorrect"),
                                                                    ("fp32", "KernelBench-correct")]
    assert "0.000370" in rec["attempts"][0]["reason"]
    assert len(fake_eval.judged) == 2
    # a problem past the float64 reference's size is a verdict from the spec, kept like "not tunable yet"
    past = json.loads((out / "level2" / "7.json").read_text())
    assert past["status"] == "not verifiable yet" and "float64 reference" in past["reason"]
    assert "attempts" not in past

    # --math tf32 takes the first verdict: no second attempt
    fake_eval.judged.clear()
    assert kb.main(argv + ["--force", "--math", "tf32", "--problems", "1"]) == 0
    rec = json.loads((out / "level2" / "1.json").read_text())
    assert rec["status"] == "KernelBench-incorrect" and rec["math"] == "tf32" and "attempts" not in rec
    assert len(fake_eval.judged) == 1

    # --table-only: the table of the records in OUT (a run cut by a time limit has no table), running nothing
    (binary).write_text("#!/bin/sh\nexit 9\n")
    assert kb.main(argv + ["--table-only", "--json", str(tmp_path / "t.json")]) == 0
    rows = {r["problem"]: r for r in json.loads((tmp_path / "t.json").read_text())["problems"]}
    assert rows[1]["status"] == "KernelBench-incorrect" and rows[1]["math"] == "tf32"
    assert rows[7]["status"] == "not verifiable yet"
    assert kb.main(argv + ["--table-only", "--force"]) == kb.USAGE


def test_a_failed_tune_says_why_from_its_results_not_the_database_path():
    # With --json -, tune's table goes to stderr and ends in "database PATH" (call 125's record of
    # #11 said only that); the reason comes from the variants that failed.
    doc = {"results": [{"name": "floor", "verified": False, "status": "wrong result",
                        "reason": "rel-L2 3.1 of its limit"},
                       {"name": "unfused.stages", "verified": False, "status": "failed", "reason": "line 1\ncuDNN: no engine"}]}
    why = kb.failed_tune_reason(doc, "table\ndatabase /tmp/x/tuning.db\n")
    assert why == ("2 of 2 variants failed: floor: wrong result (rel-L2 3.1 of its limit); "
                   "unfused.stages: failed (cuDNN: no engine)")
    assert kb.failed_tune_reason({}, "fusetune: out of memory\ndatabase /tmp/x/tuning.db\n") == "fusetune: out of memory"
    assert kb.failed_tune_reason({}, "database /tmp/x/tuning.db\n") == ""


def v2_fusetune(tmp_path):
    """A stand-in binary for a GPU run: from-torch maps 7 whole (its --json holds a `model` entry: a
    version-2 problem) and 1 as a conv2d chain block (no `model` entry); tune verifies a winner;
    export writes a ModelNew naming its math mode and logs its arguments to export.log."""
    script = tmp_path / "fusetune-v2"
    script.write_text(
        "#!" + sys.executable + "\n"
        "import json, sys\n"
        "a = sys.argv\n"
        "if a[1] == 'from-torch':\n"
        "    whole = '7_Other' in a[2]\n"
        "    doc = {'schema': 'fusetune.from-torch/1', 'unmatched': [],\n"
        "           'blocks': [] if whole else [{'spec': 'conv2d'}]}\n"
        "    if whole:\n"
        "        doc['model'] = {'spec': 'linear(m=8,k=16,n=4) | relu', 'main': 'lin', 'params': [], 'inputs': [],\n"
        "                        'main_operands': {'w': 'lin.weight', 'bias': 'lin.bias'}, 'input_operands': {}}\n"
        "    json.dump(doc, open(a[a.index('--json') + 1], 'w'))\n"
        "    print(doc['model']['spec'] if whole else 'conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | relu')\n"
        "    sys.exit(0)\n"
        "math = a[a.index('--math') + 1]\n"
        "if a[1] == 'tune':\n"
        "    print(json.dumps({'winner': 'unfused.stages'}))\n"
        "    sys.exit(0)\n"
        "if a[1] == 'export':\n"
        f"    open({str(tmp_path / 'export.log')!r}, 'a').write(json.dumps(a[2:]) + '\\n')\n"
        "    if a[2].startswith('linear') and '--init' not in a:\n"
        "        print('fusetune: --format kernelbench of a version-2 problem needs --init FILE', file=sys.stderr)\n"
        "        sys.exit(2)\n"
        "    open(a[a.index('-o') + 1], 'w').write('class ModelNew: math = ' + repr(math) + '\\n')\n"
        "    sys.exit(0)\n"
        "sys.exit(9)\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_version_2_export_gets_the_init_file_a_conv2d_chain_does_not(tmp_path, monkeypatch):
    checkout, binary, out = fake_checkout(tmp_path), v2_fusetune(tmp_path), tmp_path / "run"
    monkeypatch.setattr(kb, "cuda_available", lambda: True)
    monkeypatch.setattr(kb, "kernelbench_modules", lambda path: (FakeEval(), None, None))
    derived = []

    def fake_write_init(path, ref_src, model_doc, seed, init_path):  # init_recipe needs torch: tested there
        derived.append((os.path.basename(path), model_doc["main_operands"], seed))
        open(init_path, "w").write("{}\n")
        return init_path, None
    monkeypatch.setattr(kb, "write_init", fake_write_init)
    argv = ["--kernelbench", str(checkout), "--fusetune", str(binary), "--problems", "1,7", "--out", str(out),
            "--no-timing"]
    assert kb.main(argv) == 0
    exports = [json.loads(ln) for ln in (tmp_path / "export.log").read_text().splitlines()]
    init = str(out / "level2" / "7_init.json")
    # 1 (a conv2d chain) exports as before; 7 with --init, in both math modes of --math auto, derived once
    assert [("--init" in e, e[e.index("--init") + 1] if "--init" in e else None) for e in exports] == [
        (False, None), (False, None), (True, init), (True, init)]
    assert derived == [("7_Other.py", {"w": "lin.weight", "bias": "lin.bias"}, 42)]
    rec = json.loads((out / "level2" / "7.json").read_text())
    assert rec["status"] == "KernelBench-correct" and rec["math"] == "fp32"

    # a refusal: the export runs without --init, and where it fails (a version-2 problem) the refusal's
    # one-line reason is the attempt's; a conv2d chain from-torch mapped whole would export all the same
    (tmp_path / "export.log").unlink()
    monkeypatch.setattr(kb, "write_init", lambda *a: (None, "init file: 'w' is neither torch.randn nor torch.rand"))
    assert kb.main(argv + ["--force", "--problems", "7"]) == 0
    rec = json.loads((out / "level2" / "7.json").read_text())
    assert rec["status"] == "not exported" and rec["reason"] == "init file: 'w' is neither torch.randn nor torch.rand"
    assert ["--init" in json.loads(ln) for ln in (tmp_path / "export.log").read_text().splitlines()] == [False]


def test_from_torch_json_without_a_whole_model_mapping_means_no_init(tmp_path):
    assert kb.mapped_model(str(tmp_path / "missing.json")) is None
    doc = tmp_path / "ft.json"
    doc.write_text(json.dumps({"blocks": [{"spec": "conv2d"}], "model": {"refused": "model.py:3: ..."}}))
    assert kb.mapped_model(str(doc)) is None
    doc.write_text(json.dumps({"blocks": [], "model": {"spec": "linear(m=8,k=16,n=4)", "main_operands": {}}}))
    assert kb.mapped_model(str(doc))["spec"] == "linear(m=8,k=16,n=4)"

"""fusetune's PyTorch side: `fusetune from-torch` (from_torch.py) finds a model's conv blocks
and writes them as specs. match.py, spec_text.py and graph.py are plain Python (tested without
torch); fx_adapter.py is the only module that needs torch."""

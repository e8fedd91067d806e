"""crashlens: diagnose torch.compile / dynamo crashes in SGLang, vLLM and PyTorch logs."""

__version__ = "0.1.0"

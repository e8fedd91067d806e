"""Not a dynamo failure: a weight loader that rejects a checkpoint before anything is compiled (a negative)."""

import torch


def load_weights(state: dict, expected_layers: int) -> dict:
    layers = [k for k in state if k.startswith("layers.")]
    if len(layers) != expected_layers:
        raise ValueError(f"checkpoint has {len(layers)} layers, the config says {expected_layers}")  # expect: eager-value
    return state


def main(fullgraph: bool) -> None:
    model = torch.compile(torch.nn.Linear(4, 4), fullgraph=fullgraph)
    load_weights({"layers.0.weight": torch.ones(1)}, expected_layers=2)
    print(model(torch.ones(1, 4)))

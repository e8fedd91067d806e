"""Small crash scenarios, each shaped like a piece of serving code run under torch.compile.

Run one with `python run_scenario.py <name> [--no-fullgraph]` from samples/repro.
The line where Dynamo is expected to stop carries a trailing `# expect: <marker>` comment.
"""

"""A prompt arriving HTML-escaped from a web front end, html.unescape'd before the byte-level lookup."""

import html

import torch
from _run import compile_run


class PromptEmbed(torch.nn.Module):
    def __init__(self, d=8, prompt="fish &amp; chips &lt;3"):
        super().__init__()
        self.emb = torch.nn.Embedding(256, d)
        self.prompt = prompt

    def forward(self, scale):
        text = html.unescape(self.prompt)
        ids = torch.tensor(list(text.encode("utf-8")))
        return self.emb(ids) * scale


def main():
    torch.manual_seed(0)
    compile_run(PromptEmbed(), torch.tensor(0.5))


if __name__ == "__main__":
    main()

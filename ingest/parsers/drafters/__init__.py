"""Drafter checkpoints: the safetensors container, the vocabulary mapping, token counts."""

"""Drafter training logs (SpecForge, NVIDIA NeMo AutoModel): loss, accuracy and simulated accept length per step."""

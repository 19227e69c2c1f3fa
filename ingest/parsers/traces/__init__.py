"""Profiler traces (Kineto) and cycle timings a team measured itself."""

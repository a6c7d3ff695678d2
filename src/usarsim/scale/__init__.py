"""Trials at scale: sweep files, one trial's run and metrics, local and Ray executors, result tables."""

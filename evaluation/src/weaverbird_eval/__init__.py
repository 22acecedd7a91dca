"""Evaluation of WeaverBird on real financial data: retrieval metrics, threshold calibration, answers.

Entry point: `weaverbird eval {retrieval,calibrate,answers} --data ../shared/data`.
"""

"""General finance knowledge in code: statement line items (concepts) and the metrics computed from them.

Written from accounting definitions (US GAAP / IFRS / PRC GAAP line items and standard analyst ratios),
not from any evaluation question or answer.
"""

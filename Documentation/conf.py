# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration for sroce's documentation (make docs).
project = "sroce"
copyright = "sroce developers"
master_doc = "index"
exclude_patterns = ["sroce.7"]
html_theme = "alabaster"

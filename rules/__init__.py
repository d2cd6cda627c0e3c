"""sdylog's Datalog rules, installed as the package sdylog.rules (setup.py):
its .dl files are package data, found through sdylog.RULES_DIR."""

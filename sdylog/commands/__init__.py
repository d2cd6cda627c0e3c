"""The user commands that drive the whole pipeline: run, query, explain."""

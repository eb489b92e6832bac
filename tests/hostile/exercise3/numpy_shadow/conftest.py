"""Shadows the real conftest: importing this file from the submission folder breaks everything."""
print("SHADOW conftest.py WAS IMPORTED")
raise ImportError("the submission's conftest.py was imported instead of the real conftest")

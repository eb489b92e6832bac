"""Shadows the real json: importing this file from the submission folder breaks everything."""
print("SHADOW json.py WAS IMPORTED")
raise ImportError("the submission's json.py was imported instead of the real json")

"""Shadows the real pytest: importing this file from the submission folder breaks everything."""
print("SHADOW pytest.py WAS IMPORTED")
raise ImportError("the submission's pytest.py was imported instead of the real pytest")

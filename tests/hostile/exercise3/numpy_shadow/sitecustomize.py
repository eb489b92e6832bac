"""Shadows the real sitecustomize: importing this file from the submission folder breaks everything."""
print("SHADOW sitecustomize.py WAS IMPORTED")
raise ImportError("the submission's sitecustomize.py was imported instead of the real sitecustomize")

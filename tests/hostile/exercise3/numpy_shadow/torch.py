"""Shadows the real torch: importing this file from the submission folder breaks everything."""
print("SHADOW torch.py WAS IMPORTED")
raise ImportError("the submission's torch.py was imported instead of the real torch")

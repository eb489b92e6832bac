"""Shadows the real numpy: importing this file from the submission folder breaks everything."""
print("SHADOW numpy.py WAS IMPORTED")
raise ImportError("the submission's numpy.py was imported instead of the real numpy")

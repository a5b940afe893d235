"""Target asset for tests/test_target.py: raises while being imported, two frames deep."""


def load_weights():
    raise FileNotFoundError("weights.bin is missing")  # RAISE-LINE


load_weights()  # CALL-LINE

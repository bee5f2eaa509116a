"""Video action recognition: 2D (TSN-style) and 3D (I3D, SlowFast, R(2+1)D, P3D, C3D) networks."""

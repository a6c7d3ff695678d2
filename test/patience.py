"""How long a test waits for something that must happen before it calls it a hang.

Every wait ends as soon as what it waits for happens, so a generous bound costs nothing on a
quiet machine and keeps a loaded one (a laptop building something, CI beside other jobs) green:
it only turns a hang into a failure. Waits that expect nothing to happen use their own short,
explicit durations instead. USARSIM_TEST_PATIENCE overrides the bound (wall seconds).
"""
import os

PATIENCE = float(os.environ.get("USARSIM_TEST_PATIENCE", "300"))

"""Strong players and clairvoyant bounds, one module per game family (``STRONG`` and
``CLAIRVOYANT`` in each); :mod:`generic` has the ones every game can use, searching through the
real rules."""

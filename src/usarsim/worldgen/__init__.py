"""Tools that write world files and their assets: terrain height maps, OSM street worlds, NIST-style arenas."""

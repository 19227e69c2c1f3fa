"""Line machinery every server-log reader shares: lines, blocks, prefixes, config reprs."""

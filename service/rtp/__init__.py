"""The RTP lab: reference bots and the simulations that measure each game's return."""

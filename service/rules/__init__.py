"""The pure rules core every game is written in: cards and decks, piles and tables, building
rules, player actions, and the interface a game implements. No I/O, no money."""

"""What people send besides text: images the model sees, voice notes and audio turned
into text, documents read into text, each with a short stand-in kept in history."""

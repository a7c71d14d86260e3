enum UnicacheAppPlaceholder {}

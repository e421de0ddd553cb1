"""cirulla.bots"""

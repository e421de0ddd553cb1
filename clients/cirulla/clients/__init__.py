"""cirulla.clients"""

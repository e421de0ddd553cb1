"""cirulla.server"""

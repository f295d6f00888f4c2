print("seedbench: not yet implemented")

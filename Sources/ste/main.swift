print("ste")

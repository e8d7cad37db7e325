print("docs")

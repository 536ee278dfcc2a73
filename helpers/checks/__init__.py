"""Each notebook's exercise checks, one module a notebook (`nb01.py` for notebook 01): a function
`exercises()` gives its `helpers.exercises.Exercise`s. Importing one loads no TensorFlow."""

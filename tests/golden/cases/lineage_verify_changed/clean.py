print('clean')
